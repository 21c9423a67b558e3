export type * from './types';
export * from './errors';
export { DockerRuntime, createDockerRuntime, type DockerRuntimeOptions } from './docker';
export { PortStream } from './docker-port';
