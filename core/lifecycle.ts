import type { Logger } from './logger';

export type CloseStep = () => unknown;

/**
 * An idempotent `stop()`: the first call runs every step in order, each even when an earlier
 * one failed (failures are logged), and every later call returns the same promise.
 * `steps` is read when stop() is first called, so steps pushed while starting count.
 */
export function closeOnce(steps: CloseStep[] | (() => CloseStep[]), logger: Logger, what: string): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      for (const step of typeof steps === 'function' ? steps() : steps) {
        try {
          await step();
        } catch (err) {
          logger.warn(`error while stopping ${what}`, { err });
        }
      }
    })();
    return closing;
  };
}

/** Closes an HTTP server and the keep-alive sockets it still holds. */
export function closeServer(server: import('node:http').Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
