import { Column, Entity, PrimaryColumn } from 'typeorm';

export const SNAPSHOT_STATUSES = ['creating', 'ready', 'failed'] as const;
export type SnapshotStatus = (typeof SNAPSHOT_STATUSES)[number];

/** A saved filesystem, stored as an engine image `<repository>:<snapshot id>`. */
@Entity({ name: 'snapshots' })
export class SnapshotEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'jsonb', default: {} })
  labels: Record<string, string>;

  @Column({ type: 'text' })
  status: SnapshotStatus;

  @Column({ name: 'status_reason', type: 'text', nullable: true })
  statusReason: string | null;

  /** The sandbox it was taken from; null for a snapshot of a plain image. */
  @Column({ name: 'source_sandbox_id', type: 'text', nullable: true })
  sourceSandboxId: string | null;

  /** The image it was made from (the sandbox's image, or the image named in POST /snapshots). */
  @Column({ name: 'source_image', type: 'text' })
  sourceImage: string;

  /** Engine reference of the snapshot's image (`platform-snapshots/<workspace>:<id>`). */
  @Column({ name: 'image_ref', type: 'text' })
  imageRef: string;

  @Column({ name: 'size_bytes', type: 'bigint', nullable: true })
  sizeBytes: string | null;

  @Column({ name: 'created_by_user_id', type: 'text', nullable: true })
  createdByUserId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'ready_at', type: 'timestamptz', nullable: true })
  readyAt: Date | null;
}
