/**
 * Errors of the container runtime. Plain `Error` subclasses so that callers (the worker tier,
 * the compute subgraph) can map them to their own domain errors with `instanceof`.
 */

export class ContainerNotFoundError extends Error {
  constructor(readonly containerId: string) {
    super(`container not found: ${containerId}`);
    this.name = 'ContainerNotFoundError';
  }
}

/** The container exists but is not running (exec, listFiles and port streams need it running). */
export class ContainerNotRunningError extends Error {
  constructor(readonly containerId: string) {
    super(`container is not running: ${containerId}`);
    this.name = 'ContainerNotRunningError';
  }
}

export class ImageNotFoundError extends Error {
  constructor(readonly ref: string) {
    super(`image not found: ${ref}`);
    this.name = 'ImageNotFoundError';
  }
}

export class FileNotFoundError extends Error {
  constructor(readonly path: string) {
    super(`no such file or directory: ${path}`);
    this.name = 'FileNotFoundError';
  }
}

export class FileTooLargeError extends Error {
  constructor(
    readonly path: string,
    readonly size: number,
    readonly maxBytes: number,
  ) {
    super(`file too large: ${path} is ${size} bytes, the limit is ${maxBytes}`);
    this.name = 'FileTooLargeError';
  }
}

export class IsDirectoryError extends Error {
  constructor(readonly path: string) {
    super(`is a directory: ${path}`);
    this.name = 'IsDirectoryError';
  }
}

/** The engine cannot be reached (socket missing, connection refused, ...). */
export class RuntimeUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`container engine unavailable: ${message}`, options);
    this.name = 'RuntimeUnavailableError';
  }
}

/** An exec whose signal aborted (its caller went away): the process was killed, and there is no result. */
export class ExecAbortedError extends Error {
  constructor() {
    super('The command was killed: its caller went away');
    this.name = 'ExecAbortedError';
  }
}
