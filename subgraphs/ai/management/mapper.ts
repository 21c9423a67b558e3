import type { PlatformModelConfig } from '../../../core/config';
import type { ConversationEntity, GatewayKeyEntity, PoolEntity, PoolMemberEntity, UpstreamEntity, UsageEntity } from '../model/entities';
import type { AiConversation, AiConversationSummary } from './conversations.types';
import type { AiKey } from './keys.types';
import type { AiPoolMember, AiPoolMemberRef } from './pools.types';
import type { AiPlatformModel } from './providers.types';
import type { AiUpstream } from './upstreams.types';
import { providerOfApi } from './validation';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** The one place ai rows become API shapes. Ciphertexts and key hashes are never part of one. */
export function toAiUpstream(row: UpstreamEntity, credentialHint: string): AiUpstream {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    provider: providerOfApi(row.api),
    baseUrl: row.baseUrl,
    authKind: row.authKind,
    credentialHint,
    credentialExpiresAt: iso(row.credentialExpiresAt),
    models: row.models,
    modelMap: row.modelMap,
    weight: row.weight,
    timeoutMs: row.timeoutMs,
    enabled: row.enabled,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toAiPlatformModel(model: PlatformModelConfig): AiPlatformModel {
  return { id: model.id, model: model.model, displayName: model.displayName, provider: providerOfApi(model.api) };
}

export function toAiPoolMemberRef(row: PoolMemberEntity): AiPoolMemberRef {
  return { upstreamId: row.upstreamId, platformModelId: row.platformModelId, weight: row.weight, priority: row.priority, createdAt: row.createdAt.toISOString() };
}

export function toAiPoolMember(row: PoolMemberEntity, upstream: AiUpstream | null, platformModel: AiPlatformModel | null): AiPoolMember {
  return { ...toAiPoolMemberRef(row), upstream, platformModel };
}

/** AiPool or AiPoolSummary, by the member shape given. */
export function toAiPool<M extends AiPoolMemberRef>(row: PoolEntity, members: M[]) {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    strategy: row.strategy,
    storeConversations: row.storeConversations,
    maxAttempts: row.maxAttempts,
    members,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toAiKey(row: GatewayKeyEntity): AiKey {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    poolId: row.poolId,
    keyPrefix: row.keyPrefix,
    requestsPerMinute: row.requestsPerMinute,
    tokensPerMinute: row.tokensPerMinute,
    monthlyBudgetUsd: row.monthlyBudgetUsd === null ? null : Number(row.monthlyBudgetUsd),
    storeConversations: row.storeConversations,
    expiresAt: iso(row.expiresAt),
    revokedAt: iso(row.revokedAt),
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: iso(row.lastUsedAt),
  };
}

export function toAiConversationSummary(row: ConversationEntity): AiConversationSummary {
  return { requestId: row.requestId, workspaceId: row.workspaceId, keyId: row.keyId, poolId: row.poolId, model: row.model, status: row.status, createdAt: row.createdAt.toISOString() };
}

export function toAiConversation(row: ConversationEntity, usage: UsageEntity | null): AiConversation {
  return {
    ...toAiConversationSummary(row),
    requestBody: row.requestBody,
    responseBody: row.responseBody ?? null,
    upstreamId: usage?.upstreamId ?? null,
    inputTokens: usage ? usage.inputTokens : null,
    outputTokens: usage ? usage.outputTokens : null,
    cachedTokens: usage ? usage.cachedTokens : null,
    costUsd: usage ? Number(usage.costUsd) : null,
    latencyMs: usage ? usage.latencyMs : null,
    ttfbMs: usage?.ttfbMs ?? null,
  };
}
