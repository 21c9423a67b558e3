import type { RequestContext } from '../../../core/context';
import { decrypt } from '../../../core/crypto';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { Principal } from '../../../core/principal';
import type { SecretEntity } from './secret.entity';
import { SECRET_KEY_CONSTRAINT, type SecretRepository } from './secret.repository';
import { SecretService } from './secret.service';

/* SecretService with its repository replaced: access and validation come before any query. */

const KEY = Buffer.alloc(32, 3);
const WS = 'ws_unit00000000000000001';

function ctxOf(memberships: Principal['memberships'] | null): RequestContext {
  const principal = memberships && { userId: 'usr_unit', username: 'unit', isAdmin: false, via: 'jwt' as const, defaultWorkspaceId: WS, memberships };
  return { principal, requestId: 'req_unit', clientIp: '127.0.0.1' };
}

function fakeRepository(rows: SecretEntity[] = []) {
  const repo = {
    listByWorkspace: jest.fn(async () => [rows, rows.length] as [SecretEntity[], number]),
    findInWorkspace: jest.fn(async (workspaceId: string, id: string) => rows.find((r) => r.workspaceId === workspaceId && r.id === id) ?? null),
    findWithCiphertextByKeys: jest.fn(async (workspaceId: string, keys: string[]) => rows.filter((r) => r.workspaceId === workspaceId && keys.includes(r.key))),
    insertWithinLimit: jest.fn(async (row: SecretEntity, _max: number) => {
      rows.push(row);
      return true;
    }),
    update: jest.fn(async () => true),
    delete: jest.fn(async () => true),
  };
  return repo;
}

function recordingLogger(lines: string[]): Logger {
  const write = (message: string, fields?: Record<string, unknown>) => void lines.push(JSON.stringify({ message, fields }));
  const logger: Logger = { debug: write, info: write, warn: write, error: write, child: () => logger };
  return logger;
}

function setup(rows: SecretEntity[] = []) {
  const repository = fakeRepository(rows);
  const lines: string[] = [];
  const service = new SecretService({ repository: repository as unknown as SecretRepository, encryptionKey: KEY, logger: recordingLogger(lines) });
  const calls = () => Object.values(repository).reduce((n, fn) => n + fn.mock.calls.length, 0);
  return { service, repository, lines, calls };
}

describe('SecretService', () => {
  it('answers 404 to a non-member before touching the repository', async () => {
    const { service, calls } = setup();
    const outsider = ctxOf({ ws_other: 'owner' });
    const ref = { workspaceId: WS, secretId: 'sec_x' };
    await expect(service.list(outsider, { workspaceId: WS })).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.get(outsider, ref)).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.create(outsider, { workspaceId: WS, key: 'K', value: 'v' })).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.update(outsider, { ...ref, key: 'K' })).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.delete(outsider, ref)).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.resolveValues(outsider, { workspaceId: WS, keys: ['K'] })).rejects.toBeInstanceOf(NotFoundError);
    expect(calls()).toBe(0);
  });

  it('lets a viewer read and refuses it writes with 403, before the repository', async () => {
    const { service, repository, calls } = setup();
    const reader = ctxOf({ [WS]: 'viewer' });
    await expect(service.list(reader, { workspaceId: WS })).resolves.toMatchObject({ total: 0, page: 1, limit: 20 });
    expect(calls()).toBe(1);
    await expect(service.create(reader, { workspaceId: WS, key: 'K', value: 'v' })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(service.update(reader, { workspaceId: WS, secretId: 'sec_x', value: 'v' })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(service.delete(reader, { workspaceId: WS, secretId: 'sec_x' })).rejects.toBeInstanceOf(ForbiddenError);
    expect(repository.insertWithinLimit).not.toHaveBeenCalled();
    expect(calls()).toBe(1);
  });

  it('stores only ciphertext bound to the new id, and logs no value', async () => {
    const { service, repository, lines } = setup();
    const secret = await service.create(ctxOf({ [WS]: 'member' }), { workspaceId: WS, key: 'API_TOKEN', value: 'hunter2-unit-value' });
    const [row, max] = repository.insertWithinLimit.mock.calls[0];
    expect(max).toBe(1000);
    expect(row).toMatchObject({ id: secret.id, workspaceId: WS, key: 'API_TOKEN', createdByUserId: 'usr_unit' });
    expect(JSON.stringify(row)).not.toContain('hunter2');
    expect(decrypt(KEY, row.valueCiphertext, secret.id).toString()).toBe('hunter2-unit-value');
    expect(secret).not.toHaveProperty('value');
    expect(secret).not.toHaveProperty('valueCiphertext');
    expect(lines.join('')).not.toContain('hunter2');
  });

  it('turns the unique violation into 409 naming the key only', async () => {
    const { service, repository } = setup();
    repository.insertWithinLimit.mockRejectedValueOnce(Object.assign(new Error('duplicate key value'), { code: '23505', constraint: SECRET_KEY_CONSTRAINT }));
    const error = await service.create(ctxOf({ [WS]: 'member' }), { workspaceId: WS, key: 'TAKEN', value: 'secret-unit-value' }).catch((err) => err);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toContain('TAKEN');
    expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain('secret-unit-value');
  });

  it('answers 409 at the workspace limit', async () => {
    const { service, repository } = setup();
    repository.insertWithinLimit.mockResolvedValueOnce(false);
    await expect(service.create(ctxOf({ [WS]: 'member' }), { workspaceId: WS, key: 'ONE_MORE', value: 'v' })).rejects.toBeInstanceOf(ConflictError);
  });

  it('reseals a new value under the same id and needs key or value', async () => {
    const { service, repository } = setup();
    const member = ctxOf({ [WS]: 'member' });
    const created = await service.create(member, { workspaceId: WS, key: 'ROTATED', value: 'old-value' });
    await expect(service.update(member, { workspaceId: WS, secretId: created.id })).rejects.toBeInstanceOf(ValidationError);
    const updated = await service.update(member, { workspaceId: WS, secretId: created.id, value: 'new-value' });
    expect(updated.key).toBe('ROTATED');
    const [, , patch] = repository.update.mock.calls[0] as unknown as [string, string, { valueCiphertext: string }];
    expect(decrypt(KEY, patch.valueCiphertext, created.id).toString()).toBe('new-value');
  });
});
