import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import type { WorkspaceRole } from '../../../core/principal';
import { WorkspaceRoleEnum } from './workspace-role';

@ObjectType({ description: 'A tenant: every record of the platform belongs to one workspace.' })
export class Workspace {
  @Field(() => ID)
  id: string;

  @Field(() => String)
  name: string;

  @Field(() => Boolean, { description: "The user's own workspace, made when the user was created." })
  personal: boolean;

  @Field(() => String, { description: 'ISO 8601.' })
  createdAt: string;

  @Field(() => String, { description: 'ISO 8601.' })
  updatedAt: string;

  @Field(() => WorkspaceRoleEnum, { description: "The caller's role in this workspace." })
  myRole: WorkspaceRole;
}

@ObjectType({ description: 'A user in a workspace, with a role.' })
export class WorkspaceMember {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => ID)
  userId: string;

  @Field(() => WorkspaceRoleEnum)
  role: WorkspaceRole;

  @Field(() => String, { description: 'ISO 8601.' })
  createdAt: string;
}

export enum MembershipEventKind {
  ADDED = 'ADDED',
  ROLE_CHANGED = 'ROLE_CHANGED',
  REMOVED = 'REMOVED',
}

registerEnumType(MembershipEventKind, { name: 'MembershipEventKind' });

@ObjectType({ description: "A change of a workspace's members." })
export class WorkspaceMembershipEvent {
  @Field(() => ID)
  workspaceId: string;

  @Field(() => ID)
  userId: string;

  @Field(() => WorkspaceRoleEnum, { nullable: true, description: 'The role after the change; null when removed.' })
  role: WorkspaceRole | null;

  @Field(() => MembershipEventKind)
  kind: MembershipEventKind;

  @Field(() => String, { description: 'ISO 8601.' })
  at: string;
}
