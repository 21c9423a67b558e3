import type { WorkspaceRole } from '../../core/principal';
import { TOPICS, type PlatformPubSub } from '../../core/pubsub';
import { MembershipEventKind, type WorkspaceMembershipEvent } from './workspaces/workspace.types';

/** What gateways listen to on TOPICS.principalChanged to drop cached principals. */
export interface PrincipalChanged {
  userId?: string;
  apiKeyId?: string;
}

/** The identity domain's live events, published in one place. */
export class IdentityEvents {
  constructor(private readonly pubsub: PlatformPubSub) {}

  /**
   * Resolves once Redis has taken the message, so the gateways have it before the caller has the
   * answer: the caller's next request (into a workspace just created, with a key just revoked)
   * finds no stale principal. A Redis failure is logged by the connection and does not fail the
   * change already committed; principals then expire with the gateways' cache TTL.
   */
  async principalChanged(change: PrincipalChanged): Promise<void> {
    await this.pubsub.publishSettled(TOPICS.principalChanged, change).catch(() => undefined);
  }

  /** A membership change: to the workspace's subscribers, and to gateways for the member. */
  async membershipChanged(kind: MembershipEventKind, workspaceId: string, userId: string, role: WorkspaceRole | null): Promise<void> {
    const event: WorkspaceMembershipEvent = { workspaceId, userId, role, kind, at: new Date().toISOString() };
    this.pubsub.publish(TOPICS.workspaceMembership, event, workspaceId);
    await this.principalChanged({ userId });
  }
}
