import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { IdentityContext } from '../identity.context';
import type { ApiKeyService } from './api-key.service';
import { ApiKey, CreatedApiKey } from './api-key.types';

@Resolver(() => ApiKey)
export class ApiKeyResolver {
  constructor(private readonly service: ApiKeyService) {}

  @Query(() => [ApiKey], { description: "The caller's keys that are not revoked." })
  apiKeys(@Ctx() ctx: IdentityContext): Promise<ApiKey[]> {
    return this.service.list(ctx);
  }

  @Mutation(() => CreatedApiKey, { description: 'A new key acting as the caller; the key is shown only in this answer.' })
  createApiKey(
    @Arg('name', () => String) name: string,
    @Arg('expiresInDays', () => Int, { nullable: true }) expiresInDays: number | null | undefined,
    @Ctx() ctx: IdentityContext,
  ): Promise<CreatedApiKey> {
    return this.service.create(ctx, { name, expiresInDays });
  }

  @Mutation(() => ApiKey)
  revokeApiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: IdentityContext): Promise<ApiKey> {
    return this.service.revoke(ctx, { id });
  }
}
