import { allowedWorkspaces, requireAdmin, requireUser } from '../../../core/access';
import type { SubgraphContext } from '../../../core/context';
import { ConflictError, ForbiddenError, NotFoundError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { IdentityEvents } from '../identity.events';
import type { IdentityLoaders } from '../identity.loaders';
import { toWorkspaceMembership } from '../workspaces/workspace.mapper';
import type { WorkspaceRepository } from '../workspaces/workspace.repository';
import { toUser } from './user.mapper';
import { hashPassword } from './password';
import type { UserRepository } from './user.repository';
import type { User, WorkspaceMembership } from './user.types';
import { validatePassword, validateUsername } from './user.validation';

type Ctx = SubgraphContext<IdentityLoaders>;

export class UserService {
  constructor(
    private readonly users: UserRepository,
    private readonly workspaces: WorkspaceRepository,
    private readonly events: IdentityEvents,
    private readonly logger: Logger,
  ) {}

  /** The caller. */
  async profile(ctx: Ctx): Promise<User> {
    const principal = requireUser(ctx);
    const user = await ctx.loaders.users.load(principal.userId);
    if (!user) throw new NotFoundError('User', principal.userId);
    return user;
  }

  /** Administrators may read anyone; others only themselves. */
  async get(ctx: Ctx, input: { id: string }): Promise<User> {
    const principal = requireUser(ctx);
    if (!principal.isAdmin && principal.userId !== input.id) throw new ForbiddenError('Only administrators may read other users');
    const user = await ctx.loaders.users.load(input.id);
    if (!user) throw new NotFoundError('User', input.id);
    return user;
  }

  /** Administrators only. The user gets a personal workspace it owns, in the same transaction. */
  async create(ctx: Ctx, input: { username: string; password: string }): Promise<User> {
    requireAdmin(ctx);
    const username = validateUsername(input.username);
    const password = validatePassword(input.password);
    const row = await this.users.createWithPersonalWorkspace({ username, passwordHash: await hashPassword(password), isAdmin: false });
    if (!row) throw new ConflictError(`Username ${username} is taken`, { field: 'username' });
    await this.events.principalChanged({ userId: row.id });
    return toUser(row);
  }

  /**
   * A user's workspaces. The user and administrators see all of them; anyone else only the
   * workspaces they share with the user.
   */
  async workspacesOf(ctx: Ctx, user: User): Promise<WorkspaceMembership[]> {
    if (user.preloadedWorkspaces) return user.preloadedWorkspaces;
    const principal = ctx.principal;
    if (!principal) return [];
    const all = await ctx.loaders.userWorkspaces.load(user.id);
    if (principal.isAdmin || principal.userId === user.id) return all;
    const shared = allowedWorkspaces(ctx, all.map((m) => m.workspaceId));
    return all.filter((m) => shared.has(m.workspaceId));
  }

  /** Batch function of the `users` loader: one `id = ANY($1)` query, answers in key order. */
  async loadByIds(ids: readonly string[]): Promise<Array<User | null>> {
    const rows = await this.users.findByIds(ids);
    const byId = new Map(rows.map((row) => [row.id, toUser(row)]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** Batch function of the `userWorkspaces` loader. */
  async loadWorkspacesOfUsers(userIds: readonly string[]): Promise<WorkspaceMembership[][]> {
    const rows = await this.workspaces.membershipsOfUsers(userIds);
    const byUser = new Map<string, WorkspaceMembership[]>(userIds.map((id) => [id, []]));
    for (const row of rows) byUser.get(row.userId)?.push(toWorkspaceMembership(row));
    return userIds.map((id) => byUser.get(id) ?? []);
  }

  /**
   * First boot: creates the configured administrator unless a user of that name exists. Safe
   * when several processes boot at once (the insert is ON CONFLICT DO NOTHING).
   */
  async bootstrapAdmin(input: { username: string; password: string }): Promise<void> {
    if (await this.users.findByUsername(input.username)) return;
    const row = await this.users.createWithPersonalWorkspace({
      username: validateUsername(input.username),
      passwordHash: await hashPassword(input.password),
      isAdmin: true,
    });
    if (row) this.logger.info('created the administrator', { userId: row.id, username: row.username });
  }
}
