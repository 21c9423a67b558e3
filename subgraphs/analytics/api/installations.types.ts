import { ArgsType, Field, ID, ObjectType } from 'type-graphql';
import { PageArgs, PaginatedList } from '../../../core/pagination';

@ObjectType({ description: 'A site being tracked: the host names its events may come from and the public key its script sends.' })
export class AnalyticsInstallation {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => String)
  name: string;

  @Field(() => [String], { description: 'Host names (example.com) or subdomain patterns (*.example.com).' })
  domains: string[];

  @Field(() => String, { description: 'pk_…: public (it is in every page); only identifies the installation.' })
  publicKey: string;

  @Field(() => Boolean, { description: 'Hidden installations leave default lists; they still ingest.' })
  hidden: boolean;

  @Field(() => ID, { nullable: true })
  createdByUserId: string | null;

  @Field(() => String)
  createdAt: string;

  @Field(() => String)
  updatedAt: string;
}

@ObjectType({ description: 'A page of installations, newest first.' })
export class AnalyticsInstallationList extends PaginatedList(AnalyticsInstallation) {}

@ObjectType({ description: 'What a site pastes into its pages to be tracked.' })
export class AnalyticsInstallationScript {
  @Field(() => ID)
  installationId: string;

  @Field(() => String)
  publicKey: string;

  @Field(() => String, { description: 'PUBLIC_URL + /v1/analytics/track.js (the path alone when the platform does not know its public address).' })
  scriptUrl: string;

  @Field(() => String, { description: 'The <script> tag.' })
  snippet: string;
}

@ObjectType()
export class DeletedAnalyticsRecord {
  @Field(() => ID)
  id: string;

  @Field(() => Boolean)
  deleted: boolean;
}

@ArgsType()
export class ListAnalyticsInstallationsArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;

  @Field(() => Boolean, { nullable: true, defaultValue: false, description: 'Include hidden installations.' })
  includeHidden?: boolean | null;
}

@ArgsType()
export class AnalyticsInstallationIdArgs {
  @Field(() => ID)
  id: string;
}

@ArgsType()
export class CreateAnalyticsInstallationArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;

  @Field(() => String)
  name: string;

  @Field(() => [String], { description: '1 to 50 host names (example.com) or subdomain patterns (*.example.com).' })
  domains: string[];
}

@ArgsType()
export class UpdateAnalyticsInstallationArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => [String], { nullable: true, description: 'Replaces the list: 1 to 50 host names or *.host patterns.' })
  domains?: string[] | null;
}
