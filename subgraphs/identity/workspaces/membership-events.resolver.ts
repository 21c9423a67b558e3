import { GraphQLError } from 'graphql';
import { Arg, ID, Resolver, Root, Subscription } from 'type-graphql';
import { DomainError } from '../../../core/errors';
import { TOPICS } from '../../../core/pubsub';
import type { IdentityContext } from '../identity.context';
import { authorizeMembershipWatch } from './workspace.service';
import { WorkspaceMembershipEvent } from './workspace.types';

@Resolver(() => WorkspaceMembershipEvent)
export class MembershipEventsResolver {
  @Subscription(() => WorkspaceMembershipEvent, {
    description: "Live changes of a workspace's members; members of the workspace only.",
    // Runs as the subscription starts, so a non-member is refused (NOT_FOUND) before any event.
    topics: ({ args, context }) => {
      withErrorCode(() => authorizeMembershipWatch(context as IdentityContext, { workspaceId: args.workspaceId as string }));
      return TOPICS.workspaceMembership;
    },
    topicId: ({ args }) => args.workspaceId,
  })
  workspaceMembershipChanged(@Root() event: WorkspaceMembershipEvent, @Arg('workspaceId', () => ID) _workspaceId: string): WorkspaceMembershipEvent {
    return event;
  }
}

/**
 * graphql-ws sends a refused subscription's error as is (no formatError runs there), so the
 * domain error's code is put where clients read it: `extensions.code`.
 */
function withErrorCode(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) {
      throw new GraphQLError(err.message, { originalError: err, extensions: { code: err.code, ...(err.details ? { details: err.details } : {}) } });
    }
    throw err;
  }
}
