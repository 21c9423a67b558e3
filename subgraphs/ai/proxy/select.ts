import type { PoolStrategy } from '../model/entities';
import type { Operation } from './types';
import type { Candidate, CachedPool, RouteMember } from './types';

/** Operations each vendor API can serve (Anthropic has no embeddings endpoint). */
const SERVES: Record<RouteMember['api'], ReadonlySet<Operation>> = {
  openai: new Set(['chat', 'embeddings', 'count_tokens', 'models']),
  anthropic: new Set(['chat', 'count_tokens', 'models']),
  gemini: new Set(['chat', 'embeddings', 'count_tokens', 'models']),
};

/**
 * The upstream's name for `model` when the member serves it, else null. Upstreams: `models`
 * empty serves any model, else the model must be listed there or be a key of `modelMap`, which
 * renames it. Platform models serve exactly their own name.
 */
export function upstreamModelFor(member: RouteMember, model: string, operation: Operation = 'chat'): string | null {
  if (!SERVES[member.api].has(operation)) return null;
  if (member.platformModel !== null) return model === member.platformModel ? (member.modelMap[model] ?? model) : null;
  const mapped = member.modelMap[model];
  if (mapped !== undefined) return mapped;
  if (member.models.length === 0 || member.models.includes(model)) return model;
  return null;
}

/** Model names a pool can serve, for the vendor model lists (sorted, unique). */
export function modelsOfPool(members: readonly RouteMember[]): string[] {
  const names = new Set<string>();
  for (const member of members) {
    if (member.platformModel !== null) {
      names.add(member.platformModel);
      continue;
    }
    for (const model of member.models) names.add(model);
    for (const model of Object.keys(member.modelMap)) names.add(model);
  }
  return [...names].sort();
}

/** EWMA weight of a new time-to-first-byte sample. */
const EWMA_ALPHA = 0.3;

/**
 * Orders a pool's members for one request, per strategy. State (round-robin counters, latency
 * averages) lives in this process's memory: each proxy process balances its own traffic.
 */
export class MemberSelector {
  private readonly roundRobin = new Map<string, number>();
  private readonly latency = new Map<string, number>();

  constructor(private readonly random: () => number = Math.random) {}

  /** Members serving `model`, in the order to try them (before circuit breakers are consulted). */
  candidates(pool: CachedPool, members: readonly RouteMember[], model: string, operation: Operation): Candidate[] {
    const eligible: Candidate[] = [];
    for (const member of members) {
      const upstreamModel = upstreamModelFor(member, model, operation);
      if (upstreamModel !== null) eligible.push({ member, upstreamModel });
    }
    if (eligible.length < 2) return eligible;
    return this.order(pool.id, pool.strategy, eligible);
  }

  order(poolId: string, strategy: PoolStrategy, eligible: Candidate[]): Candidate[] {
    switch (strategy) {
      case 'fallback':
        // Stable: equal priorities keep the pool's member order.
        return eligible.slice().sort((a, b) => a.member.priority - b.member.priority);
      case 'round-robin': {
        const turn = this.roundRobin.get(poolId) ?? 0;
        this.roundRobin.set(poolId, (turn + 1) % 1_000_000_007);
        const start = turn % eligible.length;
        return start === 0 ? eligible : eligible.slice(start).concat(eligible.slice(0, start));
      }
      case 'least-latency': {
        // Unmeasured members first (so they get measured), then the fastest average.
        const score = (c: Candidate) => this.latency.get(c.member.id) ?? -1;
        return eligible.slice().sort((a, b) => score(a) - score(b));
      }
      case 'weighted':
      default:
        return this.weightedOrder(eligible);
    }
  }

  /** Random order where each next member is drawn with probability proportional to its weight. */
  private weightedOrder(eligible: Candidate[]): Candidate[] {
    const rest = eligible.slice();
    const out: Candidate[] = [];
    let total = 0;
    for (const c of rest) total += Math.max(c.member.weight, 0);
    while (rest.length > 0) {
      let pick = rest.length - 1;
      if (total > 0) {
        let r = this.random() * total;
        for (let i = 0; i < rest.length; i++) {
          r -= Math.max(rest[i].member.weight, 0);
          if (r < 0) {
            pick = i;
            break;
          }
        }
      }
      total -= Math.max(rest[pick].member.weight, 0);
      out.push(rest[pick]);
      rest.splice(pick, 1);
    }
    return out;
  }

  /** Feeds the least-latency strategy: time to the upstream's response head, ms. */
  recordTtfb(memberId: string, ms: number): void {
    const previous = this.latency.get(memberId);
    this.latency.set(memberId, previous === undefined ? ms : previous + EWMA_ALPHA * (ms - previous));
    if (this.latency.size > 100_000) this.latency.clear();
  }

  averageTtfb(memberId: string): number | undefined {
    return this.latency.get(memberId);
  }
}
