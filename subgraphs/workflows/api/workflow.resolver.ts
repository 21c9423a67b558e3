import { Args, Ctx, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { RequestContext, SubgraphContext } from '../../../core/context';
import type { WorkflowsLoaders } from '../workflows.loaders';
import type { CatalogService } from './catalog.service';
import type { ExecutionService } from './execution.service';
import type { MetricsService } from './metrics.service';
import type { WorkflowService } from './workflow.service';
import {
  CreateWorkflowArgs,
  DeletedWorkflow,
  ExecuteInMemoryArgs,
  ExecuteWorkflowArgs,
  ExecutionEventsArgs,
  ExecutionIdArgs,
  ListExecutionsArgs,
  ListWorkflowsArgs,
  MetricsArgs,
  NodeDefinitionArgs,
  TimeseriesArgs,
  TrustedWorkflowPlugin,
  UpdateWorkflowArgs,
  Workflow,
  WorkflowExecution,
  WorkflowExecutionEvent,
  WorkflowExecutionList,
  WorkflowIdArgs,
  WorkflowList,
  WorkflowMetrics,
  WorkflowMetricsTimeseries,
  WorkflowNodeDefinition,
} from './workflow.types';

type Ctx = SubgraphContext<WorkflowsLoaders>;

/** One line per field: the logic is in the services. */
@Resolver(() => Workflow)
export class WorkflowResolver {
  constructor(
    private readonly workflowService: WorkflowService,
    private readonly executions: ExecutionService,
    private readonly metrics: MetricsService,
    private readonly catalog: CatalogService,
  ) {}

  @Query(() => WorkflowList, { description: 'Workflows of a workspace, newest first.' })
  workflows(@Ctx() ctx: RequestContext, @Args(() => ListWorkflowsArgs) args: ListWorkflowsArgs) {
    return this.workflowService.list(ctx, args);
  }

  @Query(() => Workflow)
  workflow(@Ctx() ctx: RequestContext, @Args(() => WorkflowIdArgs) args: WorkflowIdArgs) {
    return this.workflowService.get(ctx, args.id);
  }

  @Mutation(() => Workflow, { description: 'Validates the graph (400 naming the node and field) and saves it, not deployed.' })
  createWorkflow(@Ctx() ctx: RequestContext, @Args(() => CreateWorkflowArgs) args: CreateWorkflowArgs) {
    return this.workflowService.create(ctx, args);
  }

  @Mutation(() => Workflow, { description: 'Replaces the given fields, validates the result and bumps the version; a deployed workflow\'s triggers follow.' })
  updateWorkflow(@Ctx() ctx: RequestContext, @Args(() => UpdateWorkflowArgs) args: UpdateWorkflowArgs) {
    return this.workflowService.update(ctx, args);
  }

  @Mutation(() => DeletedWorkflow, { description: 'Undeploys it, then deletes it with its executions.' })
  deleteWorkflow(@Ctx() ctx: RequestContext, @Args(() => WorkflowIdArgs) args: WorkflowIdArgs) {
    return this.workflowService.delete(ctx, args.id);
  }

  @Mutation(() => Workflow, { description: 'Makes its webhook and schedule triggers live (again: refreshes them).' })
  deployWorkflow(@Ctx() ctx: RequestContext, @Args(() => WorkflowIdArgs) args: WorkflowIdArgs) {
    return this.workflowService.deploy(ctx, args.id);
  }

  @Mutation(() => Workflow, { description: 'Removes its webhook and schedule triggers.' })
  undeployWorkflow(@Ctx() ctx: RequestContext, @Args(() => WorkflowIdArgs) args: WorkflowIdArgs) {
    return this.workflowService.undeploy(ctx, args.id);
  }

  @Mutation(() => WorkflowExecution, { description: 'Queues a manual execution; with wait, answers it finished (or as it is at timeoutSeconds).' })
  executeWorkflow(@Ctx() ctx: RequestContext, @Args(() => ExecuteWorkflowArgs) args: ExecuteWorkflowArgs) {
    return this.executions.execute(ctx, args);
  }

  @Mutation(() => WorkflowExecution, { description: 'Validates and runs an unsaved definition in the selected workspace.' })
  executeWorkflowInMemory(@Ctx() ctx: RequestContext, @Args(() => ExecuteInMemoryArgs) args: ExecuteInMemoryArgs) {
    return this.executions.executeInMemory(ctx, args);
  }

  @Query(() => WorkflowExecutionList, { description: 'Executions of a workflow, newest first (without steps).' })
  workflowExecutions(@Ctx() ctx: RequestContext, @Args(() => ListExecutionsArgs) args: ListExecutionsArgs) {
    return this.executions.list(ctx, args);
  }

  @Query(() => WorkflowExecution, { description: 'One execution with its steps.' })
  workflowExecution(@Ctx() ctx: RequestContext, @Args(() => ExecutionIdArgs) args: ExecutionIdArgs) {
    return this.executions.get(ctx, args);
  }

  @Mutation(() => WorkflowExecution, { description: 'Cancels a queued execution at once, asks a running one to stop; 409 when finished.' })
  cancelWorkflowExecution(@Ctx() ctx: RequestContext, @Args(() => ExecutionIdArgs) args: ExecutionIdArgs) {
    return this.executions.cancel(ctx, args);
  }

  @Query(() => WorkflowMetrics)
  workflowMetrics(@Ctx() ctx: RequestContext, @Args(() => MetricsArgs) args: MetricsArgs) {
    return this.metrics.metrics(ctx, args);
  }

  @Query(() => WorkflowMetricsTimeseries)
  workflowMetricsTimeseries(@Ctx() ctx: RequestContext, @Args(() => TimeseriesArgs) args: TimeseriesArgs) {
    return this.metrics.timeseries(ctx, args);
  }

  @Query(() => [WorkflowNodeDefinition], { description: 'Node types this platform runs; the authority on node types.' })
  workflowNodeDefinitions(@Ctx() ctx: RequestContext) {
    return this.catalog.list(ctx);
  }

  @Query(() => WorkflowNodeDefinition)
  workflowNodeDefinition(@Ctx() ctx: RequestContext, @Args(() => NodeDefinitionArgs) args: NodeDefinitionArgs) {
    return this.catalog.get(ctx, args.type);
  }

  @Query(() => [TrustedWorkflowPlugin])
  trustedWorkflowPlugins(@Ctx() ctx: RequestContext) {
    return this.catalog.trustedPlugins(ctx);
  }

  @Subscription(() => WorkflowExecutionEvent, {
    description: 'Step and status events of one execution, as they happen; ends after its final status.',
    subscribe: ({ args, context }) => (context as Ctx).loaders.services.executions.eventStream(context as Ctx, (args as ExecutionEventsArgs).executionId),
  })
  workflowExecutionEvents(@Root() event: WorkflowExecutionEvent, @Args(() => ExecutionEventsArgs) _args: ExecutionEventsArgs): WorkflowExecutionEvent {
    return event;
  }
}
