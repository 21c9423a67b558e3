import { SUBGRAPH_NAMES, subgraphUrl, type PlatformConfig, type ServiceName, type SubgraphName } from '../core/config';
import { closeOnce } from '../core/lifecycle';
import { createLogger } from '../core/logger';
import { createPlatformPubSub } from '../core/pubsub';
import { startSubgraph, type PlatformRuntime, type RunningSubgraph } from '../core/subgraph';
import { startGateway, type RunningGateway } from '../gateway';
import { SUBGRAPHS } from '../subgraphs';
import { startWorker, type RunningWorker } from '../worker';

export interface RunningPlatform {
  runtime: PlatformRuntime;
  subgraphs: Partial<Record<SubgraphName, RunningSubgraph>>;
  gateway?: RunningGateway;
  worker?: RunningWorker;
  stop(): Promise<void>;
}

export interface PlatformOptions {
  config: PlatformConfig;
  databaseUrl: string;
  redisUrl: string;
  /** Services to run; defaults to config.services. */
  services?: ServiceName[];
  onQuery?: PlatformRuntime['onQuery'];
}

/**
 * Runs the selected services in this process: subgraphs first (each migrates its schema), then
 * the gateway with the REST layer in front of them, then the worker. `stop()` stops them in the
 * reverse order and is idempotent.
 */
export async function startPlatform(options: PlatformOptions): Promise<RunningPlatform> {
  const { config } = options;
  const services = new Set(options.services ?? config.services);
  const logger = createLogger(config.logLevel);
  const pubsub = createPlatformPubSub(options.redisUrl, config.redisPrefix);
  const runtime: PlatformRuntime = { config, databaseUrl: options.databaseUrl, redisUrl: options.redisUrl, pubsub, logger, onQuery: options.onQuery, serviceUrls: {} };
  const stoppers: Array<() => Promise<void>> = [() => pubsub.close()];
  // Stopped in the reverse order of starting.
  const running: RunningPlatform = { runtime, subgraphs: {}, stop: closeOnce(() => [...stoppers].reverse(), logger, 'the platform') };

  try {
    // Subgraphs start one after another: each migrates under one advisory lock anyway.
    for (const name of SUBGRAPH_NAMES) {
      if (!services.has(name)) continue;
      const subgraph = await startSubgraph(SUBGRAPHS[name], runtime);
      running.subgraphs[name] = subgraph;
      runtime.serviceUrls![name] = subgraph.url;
      stoppers.push(() => subgraph.stop());
    }
    if (services.has('gateway')) {
      const urls = Object.fromEntries(
        SUBGRAPH_NAMES.map((name) => [name, running.subgraphs[name]?.url ?? subgraphUrl(config, name)]),
      ) as Record<SubgraphName, string>;
      running.gateway = await startGateway(runtime, { subgraphUrls: urls, inProcess: { ai: running.subgraphs.ai?.rawHttp, workflows: running.subgraphs.workflows?.rawHttp, analytics: running.subgraphs.analytics?.rawHttp } });
      const gateway = running.gateway;
      stoppers.push(() => gateway.stop());
    }
    if (services.has('worker')) {
      running.worker = await startWorker(runtime);
      const worker = running.worker;
      stoppers.push(() => worker.stop());
    }
  } catch (err) {
    await running.stop();
    throw err;
  }
  return running;
}
