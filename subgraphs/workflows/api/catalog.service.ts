import { requireUser } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { NotFoundError } from '../../../core/errors';
import type { NodeRegistry } from '../nodes/types';
import { toNodeDefinition } from './workflow.mapper';
import type { TrustedWorkflowPlugin, WorkflowNodeDefinition } from './workflow.types';

/** The node types of this process (built-ins and trusted plugins); any signed-in user may read them. */
export class CatalogService {
  constructor(
    private readonly registry: NodeRegistry,
    private readonly trusted: string[],
  ) {}

  list(ctx: RequestContext): WorkflowNodeDefinition[] {
    requireUser(ctx);
    return this.registry.list().map(toNodeDefinition);
  }

  get(ctx: RequestContext, type: string): WorkflowNodeDefinition {
    requireUser(ctx);
    const found = this.registry.get(type);
    if (!found) throw new NotFoundError('Node definition', type);
    return toNodeDefinition(found.definition);
  }

  trustedPlugins(ctx: RequestContext): TrustedWorkflowPlugin[] {
    requireUser(ctx);
    const definitions = this.registry.list();
    return this.trusted.map((pkg) => ({ package: pkg, nodeTypes: definitions.filter((d) => d.plugin === pkg).map((d) => d.type) }));
  }
}
