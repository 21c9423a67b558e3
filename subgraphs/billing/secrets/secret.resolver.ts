import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { SecretService } from './secret.service';
import { CreateSecretArgs, DeletedSecret, ListSecretsArgs, Secret, SecretArgs, SecretList, UpdateSecretArgs } from './secret.types';

/** One line per field: the logic is in SecretService. */
@Resolver(() => Secret)
export class SecretResolver {
  constructor(private readonly service: SecretService) {}

  @Query(() => SecretList, { description: 'Secrets of a workspace, newest first (metadata only). Needs the viewer role.' })
  secrets(@Ctx() ctx: RequestContext, @Args(() => ListSecretsArgs) args: ListSecretsArgs): Promise<SecretList> {
    return this.service.list(ctx, args);
  }

  @Query(() => Secret, { description: 'One secret of a workspace (metadata only). Needs the viewer role.' })
  secret(@Ctx() ctx: RequestContext, @Args(() => SecretArgs) args: SecretArgs): Promise<Secret> {
    return this.service.get(ctx, args);
  }

  @Mutation(() => Secret, { description: 'Stores a secret encrypted. Needs the member role.' })
  createSecret(@Ctx() ctx: RequestContext, @Args(() => CreateSecretArgs) args: CreateSecretArgs): Promise<Secret> {
    return this.service.create(ctx, args);
  }

  @Mutation(() => Secret, { description: 'Renames a secret and/or replaces its value. Needs the member role.' })
  updateSecret(@Ctx() ctx: RequestContext, @Args(() => UpdateSecretArgs) args: UpdateSecretArgs): Promise<Secret> {
    return this.service.update(ctx, args);
  }

  @Mutation(() => DeletedSecret, { description: 'Deletes a secret. Needs the member role.' })
  deleteSecret(@Ctx() ctx: RequestContext, @Args(() => SecretArgs) args: SecretArgs): Promise<DeletedSecret> {
    return this.service.delete(ctx, args);
  }
}
