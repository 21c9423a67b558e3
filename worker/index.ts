import type { PlatformRuntime } from '../core/subgraph';

export interface RunningWorker {
  stop(): Promise<void>;
}

export async function startWorker(_runtime: PlatformRuntime): Promise<RunningWorker> {
  throw new Error('worker: being written');
}
