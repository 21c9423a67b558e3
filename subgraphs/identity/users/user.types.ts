import { Directive, Field, ID, ObjectType } from 'type-graphql';
import type { WorkspaceRole } from '../../../core/principal';
import { WorkspaceRoleEnum } from '../workspaces/workspace-role';

@ObjectType({ description: "A workspace a user belongs to, with the user's role there." })
export class WorkspaceMembership {
  @Field(() => ID)
  workspaceId: string;

  @Field(() => String)
  name: string;

  @Field(() => WorkspaceRoleEnum)
  role: WorkspaceRole;
}

@Directive('@key(fields: "id")')
@ObjectType({ description: 'A person or machine that signs in.' })
export class User {
  @Field(() => ID)
  id: string;

  @Field(() => String)
  username: string;

  @Field(() => Boolean)
  isAdmin: boolean;

  @Field(() => ID)
  defaultWorkspaceId: string;

  @Field(() => String, { description: 'ISO 8601.' })
  createdAt: string;

  @Field(() => String, { description: 'ISO 8601.' })
  updatedAt: string;

  /** Set on the user of a sign-in answer: the caller is this user though no principal says so yet. */
  signingIn?: boolean;

  /** Memberships already known when the user was loaded (login answers, for example). */
  preloadedWorkspaces?: WorkspaceMembership[];
}
