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

  principalChanged(change: PrincipalChanged): void {
    this.pubsub.publish(TOPICS.principalChanged, change);
  }

  /** A membership change: to the workspace's subscribers, and to gateways for the member. */
  membershipChanged(kind: MembershipEventKind, workspaceId: string, userId: string, role: WorkspaceRole | null): void {
    const event: WorkspaceMembershipEvent = { workspaceId, userId, role, kind, at: new Date().toISOString() };
    this.pubsub.publish(TOPICS.workspaceMembership, event, workspaceId);
    this.principalChanged({ userId });
  }
}
