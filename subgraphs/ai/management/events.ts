import { TOPICS, type PlatformPubSub } from '../../../core/pubsub';

/** Payload of TOPICS.aiConfigChanged. */
export interface AiConfigChangedEvent {
  workspaceId: string;
}

/** Tells every proxy to drop the workspace's cached routes; called after each committed change. */
export class AiConfigEvents {
  constructor(private readonly pubsub: Pick<PlatformPubSub, 'publish'>) {}

  changed(workspaceId: string): void {
    const event: AiConfigChangedEvent = { workspaceId };
    this.pubsub.publish(TOPICS.aiConfigChanged, event);
  }
}
