import { Pool } from 'undici';

/** One HTTP request a benchmark sends again and again. */
export interface BenchRequest {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  failures: number;
  /** Completed requests per second. */
  rps: number;
  /** Latency percentiles in milliseconds (microsecond resolution). */
  p50: number;
  p99: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summarise(latencies: number[], failures: number, seconds: number): LoadResult {
  const sorted = Float64Array.from(latencies).sort();
  return { requests: latencies.length, failures, rps: latencies.length / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function once(pool: Pool, path: string, request: BenchRequest): Promise<boolean> {
  const response = await pool.request({ path, method: request.method, headers: request.headers, body: request.body });
  await response.body.dump();
  return response.statusCode >= 200 && response.statusCode < 300;
}

/**
 * Closed loop: `connections` clients each send the next request as soon as the last answered,
 * for `seconds`. Measures saturated throughput. Every loop ends by the deadline.
 */
export async function saturate(request: BenchRequest, connections: number, seconds: number): Promise<LoadResult> {
  const url = new URL(request.url);
  const pool = new Pool(url.origin, { connections, pipelining: 1 });
  const path = `${url.pathname}${url.search}`;
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          if (await once(pool, path, request)) latencies.push(performance.now() - t0);
          else failures++;
        } catch {
          failures++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  return summarise(latencies, failures, elapsed);
}

/**
 * Open loop at a fixed rate: request i is sent at start + i / rate whatever the previous ones
 * are doing (no coordinated omission), and its latency is measured from that moment. By default
 * the last half millisecond before each send is spun, for an even rate (sub-millisecond
 * comparisons need it); `spin: false` sleeps instead and sends whatever is due on waking, which
 * leaves the CPU to the system under test (on 2 cores the spin costs it a third of one) and adds
 * the timer's lateness, about a millisecond, to every latency on both paths.
 */
export async function fixedRate(request: BenchRequest, rate: number, seconds: number, options: { spin?: boolean } = {}): Promise<LoadResult> {
  const spin = options.spin ?? true;
  const url = new URL(request.url);
  const pool = new Pool(url.origin, { connections: 64, pipelining: 1 });
  const path = `${url.pathname}${url.search}`;
  const latencies: number[] = [];
  let failures = 0;
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (spin) {
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait - 0.5));
      while (performance.now() < due) {
        /* the last half millisecond is spun, for an even rate */
      }
    } else {
      // A timer may fire a fraction of a millisecond early: sleep again until the due time has passed.
      for (let left = wait; left > 0; left = due - performance.now()) await new Promise((resolve) => setTimeout(resolve, left));
    }
    inFlight.push(
      once(pool, path, request).then(
        (ok) => void (ok ? latencies.push(performance.now() - due) : failures++),
        () => void failures++,
      ),
    );
  }
  await Promise.race([Promise.all(inFlight), new Promise((resolve) => setTimeout(resolve, 30_000))]);
  await pool.close();
  return summarise(latencies, failures, seconds);
}
