import { TOPICS, type PlatformPubSub } from '../../../core/pubsub';

/** Payload of TOPICS.aiConfigChanged. */
export interface AiConfigChangedEvent {
  workspaceId: string;
}

/** Tells every proxy to drop the workspace's cached routes; called after each committed change. */
export class AiConfigEvents {
  constructor(private readonly pubsub: Pick<PlatformPubSub, 'publishSettled'>) {}

  /**
   * Resolves once Redis has taken the message, so every proxy has it before the caller has the
   * answer: a key revoked or a pool changed is in effect for the very next request. A Redis
   * failure does not fail the committed change (the proxies' route cache expires anyway).
   */
  async changed(workspaceId: string): Promise<void> {
    const event: AiConfigChangedEvent = { workspaceId };
    await this.pubsub.publishSettled(TOPICS.aiConfigChanged, event).catch(() => undefined);
  }
}
