import type { WorkflowsContext } from './context';

/**
 * settings.concurrency: executions of one workflow running at once. A slot is a member of a Redis
 * sorted set per workflow, scored by its lease's end; a run renews its lease while it holds it,
 * so the slot of a killed worker frees itself within LEASE_MS. Acquire and release are one Lua
 * script each, atomic across workers. A run that finds no free slot goes back to the queue
 * (delayed by 100–250 ms) and tries again; an execution that waits (a wait node) gives its slot up.
 */
const LEASE_MS = 30_000;

const ACQUIRE = `
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) * 2)
  return 1
end
return 0`;

export interface SlotLease {
  key: string;
  member: string;
  renew: NodeJS.Timeout;
}

function slotsKey(w: WorkflowsContext, workflowId: string): string {
  return `${w.ctx.config.redisPrefix}:wf-slots:${workflowId}`;
}

/** Takes one of the workflow's `limit` slots for the execution (or renews the one it holds); null when all are taken. */
export async function acquireSlot(w: WorkflowsContext, workflowId: string, executionId: string, limit: number): Promise<SlotLease | null> {
  const key = slotsKey(w, workflowId);
  const take = () => w.redis.eval(ACQUIRE, 1, key, executionId, String(limit), String(Date.now()), String(LEASE_MS)) as Promise<number>;
  if ((await take()) !== 1) return null;
  const renew = setInterval(() => void take().catch(() => undefined), LEASE_MS / 3);
  renew.unref();
  return { key, member: executionId, renew };
}

/** Gives the slot back. */
export async function releaseSlot(w: WorkflowsContext, lease: SlotLease): Promise<void> {
  clearInterval(lease.renew);
  await w.redis.zrem(lease.key, lease.member);
}

