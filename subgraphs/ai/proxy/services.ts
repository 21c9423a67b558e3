import type { PlatformConfig } from '../../../core/config';
import type { Logger } from '../../../core/logger';
import type { CircuitBreakers } from './circuit';
import type { FailoverOptions } from './forward';
import type { KeyLimits } from './limits';
import type { RouteCache } from './routes';
import type { MemberSelector } from './select';
import type { UpstreamClient } from './upstream';
import type { UsageRecorder } from './usage';

/** The proxy's parts, built once per process (`createVendorProxy`) and shared by the routes and the playground. */
export interface ProxyServices {
  config: PlatformConfig;
  logger: Logger;
  routes: RouteCache;
  selector: MemberSelector;
  breakers: CircuitBreakers;
  client: UpstreamClient;
  recorder: UsageRecorder;
  limits: KeyLimits;
  failover: FailoverOptions;
  /** Stops the route cache's subscription and closes pooled upstream connections (idempotent); in-flight requests end and are recorded. */
  closeConnections(): Promise<void>;
  /** closeConnections, then writes the last usage rows (idempotent). */
  close(): Promise<void>;
}
