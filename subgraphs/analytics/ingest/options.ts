/** Tuning of the ingestion pipeline; every field has a default fit for production. */
export interface IngestOptions {
  /** The writer flushes this often, ms. @defaultValue 200 */
  flushIntervalMs?: number;
  /** A batch is written as soon as it holds this many events. @defaultValue 2000 */
  flushRows?: number;
  /** Past this many events waiting to be written, requests are refused with 503. @defaultValue 200000 */
  maxBufferedRows?: number;
  /** How long a found installation stays cached, ms (invalidate() drops it sooner). @defaultValue 5000 */
  installationTtlMs?: number;
  /** How long an unknown key stays cached, ms. @defaultValue 2000 */
  unknownKeyTtlMs?: number;
  /** First delay before a failed flush is retried, ms; doubles up to maxRetryDelayMs. @defaultValue 200 */
  retryDelayMs?: number;
  /** @defaultValue 5000 */
  maxRetryDelayMs?: number;
  /** How long close() keeps retrying a failing flush before it gives up (and logs what is lost), ms. @defaultValue 30000 */
  closeTimeoutMs?: number;
  /** The clock of events (their `ts` window, the salt's day), for tests. @defaultValue Date.now */
  now?: () => number;
}

export type ResolvedIngestOptions = Required<IngestOptions>;

export function resolveIngestOptions(options: IngestOptions = {}): ResolvedIngestOptions {
  const resolved: ResolvedIngestOptions = {
    flushIntervalMs: options.flushIntervalMs ?? 200,
    flushRows: options.flushRows ?? 2000,
    maxBufferedRows: options.maxBufferedRows ?? 200_000,
    installationTtlMs: options.installationTtlMs ?? 5000,
    unknownKeyTtlMs: options.unknownKeyTtlMs ?? 2000,
    retryDelayMs: options.retryDelayMs ?? 200,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 5000,
    closeTimeoutMs: options.closeTimeoutMs ?? 30_000,
    now: options.now ?? Date.now,
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (typeof value === 'number' && !(Number.isFinite(value) && value > 0)) throw new Error(`Ingest option ${name} must be a positive number, not ${value}`);
  }
  return resolved;
}
