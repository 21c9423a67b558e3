import { CreateAiGateway1768089600000 } from './migrations/1768089600000-create-ai-gateway';
import { AiMeteringEventEntity, ConversationEntity, GatewayKeyEntity, PoolEntity, PoolMemberEntity, UpstreamEntity, UsageEntity } from './model/entities';

/** Tables of the ai schema. */
export const AI_ENTITIES = [UpstreamEntity, PoolEntity, PoolMemberEntity, GatewayKeyEntity, UsageEntity, ConversationEntity, AiMeteringEventEntity];
export const AI_MIGRATIONS = [CreateAiGateway1768089600000];
