import { requireUser } from '../../../core/access';
import type { AiConfig } from '../../../core/config';
import type { RequestContext } from '../../../core/context';
import { toAiPlatformModel } from './mapper';
import type { AiPlatformModel, AiProvider } from './providers.types';
import { PROVIDER_APIS, type ProviderToken } from './validation';

/** What the gateway serves of each vendor: the base path of its SDK routes and the key's header. */
const PROVIDERS: Record<ProviderToken, Omit<AiProvider, 'id' | 'api' | 'oauth'>> = {
  'vendor-a': { name: 'OpenAI API', basePath: '/v1/ai-gateway/vendor-a/v1', authHeader: 'Authorization: Bearer <gateway key>', sdk: 'openai' },
  'vendor-b': { name: 'Anthropic API', basePath: '/v1/ai-gateway/vendor-b', authHeader: 'x-api-key: <gateway key>', sdk: '@anthropic-ai/sdk' },
  'vendor-c': { name: 'Gemini API', basePath: '/v1/ai-gateway/vendor-c', authHeader: 'x-goog-api-key: <gateway key> (or ?key=<gateway key>)', sdk: '@google/genai' },
};

/** Discovery: the vendor protocols and the operator's platform models. Any signed-in caller. */
export class ProviderService {
  constructor(private readonly ai: Pick<AiConfig, 'platformModels' | 'oauth'>) {}

  providers(ctx: RequestContext): AiProvider[] {
    requireUser(ctx);
    return (Object.keys(PROVIDERS) as ProviderToken[]).map((id) => ({ id, api: PROVIDER_APIS[id], ...PROVIDERS[id], oauth: Boolean(this.ai.oauth[id]) }));
  }

  platformModels(ctx: RequestContext): AiPlatformModel[] {
    requireUser(ctx);
    return this.ai.platformModels.map(toAiPlatformModel);
  }

  /** A platform model by id, or undefined (pools check their members with it). */
  platformModel(id: string): AiPlatformModel | undefined {
    const model = this.ai.platformModels.find((m) => m.id === id);
    return model ? toAiPlatformModel(model) : undefined;
  }
}
