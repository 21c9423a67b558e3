import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A whole GPU held by a sandbox. The primary key makes a device impossible to hand out twice. */
@Entity({ name: 'gpu_allocations' })
export class GpuAllocationEntity {
  @PrimaryColumn({ name: 'device_id', type: 'text' })
  deviceId: string;

  @Column({ name: 'gpu_type', type: 'text' })
  gpuType: string;

  @Column({ name: 'sandbox_id', type: 'text' })
  sandboxId: string;

  @Column({ name: 'allocated_at', type: 'timestamptz' })
  allocatedAt: Date;
}
