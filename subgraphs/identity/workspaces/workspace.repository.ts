import type { DataSource, EntityManager, Repository } from 'typeorm';
import { ID_PREFIX, newId } from '../../../core/ids';
import type { WorkspaceRole } from '../../../core/principal';
import { WorkspaceEntity } from './workspace.entity';
import { WorkspaceMemberEntity } from './workspace-member.entity';

/** A user's membership with the workspace's name, as User.workspaces shows it. */
export interface MembershipRow {
  userId: string;
  workspaceId: string;
  name: string;
  role: WorkspaceRole;
}

/** The members of one workspace, read and changed while that workspace is locked. */
export interface LockedWorkspace {
  workspace: WorkspaceEntity;
  members: WorkspaceMemberEntity[];
  insertMember(userId: string, role: WorkspaceRole): Promise<WorkspaceMemberEntity>;
  updateRole(member: WorkspaceMemberEntity, role: WorkspaceRole): Promise<WorkspaceMemberEntity>;
  deleteMember(member: WorkspaceMemberEntity): Promise<void>;
}

export class WorkspaceRepository {
  private readonly workspaces: Repository<WorkspaceEntity>;
  private readonly members: Repository<WorkspaceMemberEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.workspaces = dataSource.getRepository(WorkspaceEntity);
    this.members = dataSource.getRepository(WorkspaceMemberEntity);
  }

  findById(id: string): Promise<WorkspaceEntity | null> {
    return this.workspaces.findOneBy({ id });
  }

  /** The workspaces `userId` belongs to with its role in each, oldest first. */
  async workspacesOfUser(userId: string): Promise<Array<{ workspace: WorkspaceEntity; role: WorkspaceRole }>> {
    const rows: Array<WorkspaceEntity & { role: WorkspaceRole }> = await this.dataSource.query(
      `SELECT w."id", w."name", w."personal", w."created_at" AS "createdAt", w."updated_at" AS "updatedAt", m."role"
         FROM "identity"."workspace_members" m JOIN "identity"."workspaces" w ON w."id" = m."workspace_id"
        WHERE m."user_id" = $1 ORDER BY w."created_at", w."id"`,
      [userId],
    );
    return rows.map(({ role, ...workspace }) => ({ workspace, role }));
  }

  /** Memberships of many users in one query (User.workspaces loader). */
  async membershipsOfUsers(userIds: readonly string[]): Promise<MembershipRow[]> {
    if (!userIds.length) return [];
    return this.dataSource.query(
      `SELECT m."user_id" AS "userId", m."workspace_id" AS "workspaceId", w."name", m."role"
         FROM "identity"."workspace_members" m JOIN "identity"."workspaces" w ON w."id" = m."workspace_id"
        WHERE m."user_id" = ANY($1) ORDER BY w."created_at", w."id"`,
      [[...userIds]],
    );
  }

  /** workspace id → role, for building a principal: one small indexed query. */
  async rolesOfUser(userId: string): Promise<Record<string, WorkspaceRole>> {
    const rows: Array<{ workspace_id: string; role: WorkspaceRole }> = await this.dataSource.query(
      `SELECT "workspace_id", "role" FROM "identity"."workspace_members" WHERE "user_id" = $1`,
      [userId],
    );
    return Object.fromEntries(rows.map((r) => [r.workspace_id, r.role]));
  }

  /** Members of many workspaces in one query (Workspace.members loader). */
  membersOfWorkspaces(workspaceIds: readonly string[]): Promise<WorkspaceMemberEntity[]> {
    if (!workspaceIds.length) return Promise.resolve([]);
    return this.members
      .createQueryBuilder('m')
      .where('m.workspaceId = ANY(:ids)', { ids: [...workspaceIds] })
      .orderBy('m.createdAt', 'ASC')
      .addOrderBy('m.id', 'ASC')
      .getMany();
  }

  /** A new shared (not personal) workspace owned by `ownerId`. */
  createWithOwner(name: string, ownerId: string): Promise<WorkspaceEntity> {
    return this.dataSource.transaction(async (manager) => {
      const workspace = await manager.getRepository(WorkspaceEntity).save(
        manager.getRepository(WorkspaceEntity).create({ id: newId(ID_PREFIX.workspace), name, personal: false, createdAt: new Date(), updatedAt: new Date() }),
      );
      await insertMember(manager, workspace.id, ownerId, 'owner');
      return workspace;
    });
  }

  /**
   * Runs `fn` in a transaction holding the workspace row locked (`FOR UPDATE`), so concurrent
   * membership changes of one workspace happen one at a time and "at least one owner" holds.
   * Returns null when the workspace does not exist.
   */
  withLockedWorkspace<T>(workspaceId: string, fn: (locked: LockedWorkspace) => Promise<T>): Promise<T | null> {
    return this.dataSource.transaction(async (manager) => {
      const workspace = await manager
        .getRepository(WorkspaceEntity)
        .createQueryBuilder('w')
        .setLock('pessimistic_write')
        .where('w.id = :workspaceId', { workspaceId })
        .getOne();
      if (!workspace) return null;
      const memberRows = manager.getRepository(WorkspaceMemberEntity);
      const members = await memberRows.find({ where: { workspaceId }, order: { createdAt: 'ASC' } });
      return fn({
        workspace,
        members,
        insertMember: (userId, role) => insertMember(manager, workspaceId, userId, role),
        updateRole: async (member, role) => memberRows.save({ ...member, role, updatedAt: new Date() }),
        deleteMember: async (member) => {
          await memberRows.delete({ id: member.id });
        },
      });
    });
  }
}

function insertMember(manager: EntityManager, workspaceId: string, userId: string, role: WorkspaceRole): Promise<WorkspaceMemberEntity> {
  const rows = manager.getRepository(WorkspaceMemberEntity);
  const now = new Date();
  return rows.save(rows.create({ id: newId(ID_PREFIX.workspaceMember), workspaceId, userId, role, createdAt: now, updatedAt: now }));
}
