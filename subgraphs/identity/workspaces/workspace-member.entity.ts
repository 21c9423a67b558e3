import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { WorkspaceRole } from '../../../core/principal';

@Entity({ name: 'workspace_members' })
export class WorkspaceMemberEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text', name: 'workspace_id' })
  workspaceId: string;

  @Column({ type: 'text', name: 'user_id' })
  userId: string;

  @Column({ type: 'text' })
  role: WorkspaceRole;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
