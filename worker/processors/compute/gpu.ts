import { ACTIVE_STATUSES } from '../../../subgraphs/compute/sandboxes/sandbox.states';
import type { SandboxEntity } from '../../../subgraphs/compute/sandboxes/sandbox.entity';
import { PermanentError } from './common';
import type { ComputeContext } from './context';

/**
 * Whole-GPU allocation. The inventory (config.compute.gpuInventory) says which devices exist;
 * `compute.gpu_allocations` (primary key device_id) says who holds them, so two workers can
 * never hand out one device twice: both INSERT, one wins, the other finds too few and rolls back.
 */

/**
 * Devices held by the sandbox: the ones it already holds (a retried start), else `gpuCount` free
 * devices of its type, taken all at once or not at all. Null when not enough are free now.
 * Throws PermanentError when the inventory could never satisfy the request.
 */
export async function allocateGpus(c: ComputeContext, sandbox: SandboxEntity): Promise<string[] | null> {
  const candidates = inventoryFor(c, sandbox);
  const held: Array<{ device_id: string }> = await c.dataSource.query(`SELECT device_id FROM compute.gpu_allocations WHERE sandbox_id = $1 ORDER BY device_id`, [sandbox.id]);
  if (held.length >= sandbox.gpuCount) return held.map((r) => r.device_id).slice(0, sandbox.gpuCount);
  const needed = sandbox.gpuCount - held.length;

  return c.dataSource.transaction(async (manager) => {
    // Free devices in inventory order; ON CONFLICT skips one a concurrent transaction took.
    const taken: Array<{ device_id: string }> = await manager.query(
      `INSERT INTO compute.gpu_allocations (device_id, gpu_type, sandbox_id, allocated_at)
       SELECT t.device_id, t.gpu_type, $3, now()
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(device_id, gpu_type, n)
        WHERE NOT EXISTS (SELECT 1 FROM compute.gpu_allocations a WHERE a.device_id = t.device_id)
        ORDER BY t.n
        LIMIT $4
       ON CONFLICT (device_id) DO NOTHING
       RETURNING device_id`,
      [candidates.map((d) => d.id), candidates.map((d) => d.type), sandbox.id, needed],
    );
    if (taken.length < needed) {
      // Not enough: roll back what this attempt took, so a half allocation never blocks another sandbox.
      throw new NotEnoughGpus();
    }
    return [...held.map((r) => r.device_id), ...taken.map((r) => r.device_id)];
  }).catch((err) => {
    if (err instanceof NotEnoughGpus) return null;
    throw err;
  });
}

class NotEnoughGpus extends Error {}

function inventoryFor(c: ComputeContext, sandbox: SandboxEntity): Array<{ id: string; type: string }> {
  const inventory = c.config.gpuInventory;
  const types = sandbox.gpuType ? [sandbox.gpuType] : Object.keys(inventory);
  const devices = types.flatMap((type) => (inventory[type] ?? []).map((id) => ({ id, type })));
  if (devices.length < sandbox.gpuCount) {
    const what = sandbox.gpuType ? `${sandbox.gpuType} GPUs` : 'GPUs';
    throw new PermanentError(`${sandbox.gpuCount} ${what} requested, this deployment has ${devices.length}`);
  }
  return devices;
}

/** Frees every device the sandbox holds (stop, delete, failure); a no-op when it holds none. */
export async function releaseGpus(c: ComputeContext, sandboxId: string): Promise<void> {
  await c.dataSource.query(`DELETE FROM compute.gpu_allocations WHERE sandbox_id = $1`, [sandboxId]);
}

/** Frees devices held by sandboxes that no longer need them (not active, or gone); returns how many. */
export async function releaseOrphanedGpus(c: ComputeContext): Promise<number> {
  // TypeORM answers a DELETE with [rows, rowCount].
  const [, count]: [unknown[], number] = await c.dataSource.query(
    `DELETE FROM compute.gpu_allocations a
      WHERE NOT EXISTS (SELECT 1 FROM compute.sandboxes s WHERE s.id = a.sandbox_id AND s.status = ANY($1::text[]))
      RETURNING device_id`,
    [[...ACTIVE_STATUSES]],
  );
  return count;
}
