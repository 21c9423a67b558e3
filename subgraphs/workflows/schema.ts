import { CreateWorkflows1768176000000 } from './migrations/1768176000000-create-workflows';
import { ExecutionEntity, ExecutionStepEntity, WebhookRegistrationEntity, WorkflowEntity } from './model/entities';

export const WORKFLOW_ENTITIES = [WorkflowEntity, WebhookRegistrationEntity, ExecutionEntity, ExecutionStepEntity];
export const WORKFLOW_MIGRATIONS = [CreateWorkflows1768176000000];
