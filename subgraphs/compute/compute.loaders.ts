import type { ComputeServices } from './index';

/**
 * Per-request values of the compute context. Subscriptions' `subscribe` functions are declared
 * in decorators, before any instance exists, so they reach the services through here.
 */
export interface ComputeLoaders extends Record<string, unknown> {
  services: ComputeServices;
}
