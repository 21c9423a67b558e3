import type { ComputeConfig } from '../../core/config';
import { DockerRuntime } from './docker';

export type * from './types';
export * from './errors';
export { DockerRuntime, createDockerRuntime, type DockerRuntimeOptions } from './docker';
export { PortStream } from './docker-port';

/** The engine client the configuration names: `DOCKER_HOST` unix:///path or tcp://host:port, else the local socket. */
export function createEngine(config: ComputeConfig): DockerRuntime {
  const host = config.dockerHost;
  if (host?.startsWith('unix://')) return new DockerRuntime({ socketPath: host.slice('unix://'.length), gpuDeviceRequests: config.gpuDeviceRequests });
  return new DockerRuntime({ host, gpuDeviceRequests: config.gpuDeviceRequests });
}
