import type { WorkflowServices } from './index';

/**
 * Per-request values of the workflows context. Subscriptions' `subscribe` functions are declared
 * in decorators, before any instance exists, so they reach the services through here.
 */
export interface WorkflowsLoaders extends Record<string, unknown> {
  services: WorkflowServices;
}
