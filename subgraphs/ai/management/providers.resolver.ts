import { Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { ProviderService } from './providers.service';
import { AiPlatformModel, AiProvider } from './providers.types';

@Resolver(() => AiProvider)
export class AiProviderResolver {
  constructor(private readonly service: ProviderService) {}

  @Query(() => [AiProvider], { description: 'The vendor protocols of the gateway: base path, key header and SDK of each.' })
  aiProviders(@Ctx() ctx: RequestContext) {
    return this.service.providers(ctx);
  }

  @Query(() => [AiPlatformModel], { description: 'Models the operator offers every workspace; pools may include them.' })
  aiPlatformModels(@Ctx() ctx: RequestContext) {
    return this.service.platformModels(ctx);
  }
}
