import { DomainError, InvalidStateError, NotFoundError, PayloadTooLargeError, UnavailableError, ValidationError } from '../../core/errors';
import {
  ContainerNotFoundError,
  ContainerNotRunningError,
  ExecAbortedError,
  FileNotFoundError,
  FileTooLargeError,
  ImageNotFoundError,
  IsDirectoryError,
  RuntimeUnavailableError,
} from '../../worker/runtime/errors';

/** Maps container-runtime errors to the platform's domain errors (one place); others pass through. */
export function toDomainError(err: unknown, sandboxId: string): unknown {
  if (err instanceof DomainError) return err;
  if (err instanceof FileNotFoundError) return new NotFoundError('File', err.path);
  if (err instanceof IsDirectoryError) return new ValidationError(`${err.path} is a directory`, { field: 'path' });
  if (err instanceof FileTooLargeError) return new PayloadTooLargeError(err.message, { size: err.size, maxBytes: err.maxBytes });
  if (err instanceof ContainerNotFoundError || err instanceof ContainerNotRunningError) {
    return new InvalidStateError(`sandbox ${sandboxId}`, 'without a running container', 'reach');
  }
  if (err instanceof ImageNotFoundError) return new ValidationError(`Image ${err.ref} is not available on the engine`, { field: 'image' });
  if (err instanceof RuntimeUnavailableError) return new UnavailableError('The container engine is unreachable; try again shortly');
  if (err instanceof ExecAbortedError) return new UnavailableError('The command was killed: its caller went away');
  return err;
}

/** Runs `fn`, rethrowing runtime errors as domain errors. */
export async function mapRuntimeErrors<T>(sandboxId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toDomainError(err, sandboxId);
  }
}
