import { requireWorkspaceRole } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { decrypt, encrypt } from '../../../core/crypto';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/errors';
import { hasPrefix, ID_PREFIX, newId } from '../../../core/ids';
import type { Logger } from '../../../core/logger';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import { MAX_SECRETS_PER_WORKSPACE, validateSecretKey, validateSecretValue } from './secret.limits';
import { toDeletedSecret, toSecret } from './secret.mapper';
import { isDuplicateKeyError, type SecretPatch, type SecretRepository } from './secret.repository';
import type { DeletedSecret, Secret } from './secret.types';

export interface ListSecretsInput {
  workspaceId: string;
  page?: number | null;
  limit?: number | null;
}

export interface SecretRefInput {
  workspaceId: string;
  secretId: string;
}

export interface CreateSecretInput {
  workspaceId: string;
  key: string;
  value: string;
}

export interface UpdateSecretInput extends SecretRefInput {
  key?: string | null;
  value?: string | null;
}

export interface ResolvedSecretValues {
  /** key → plaintext value */
  values: Record<string, string>;
}

export interface SecretServiceOptions {
  repository: SecretRepository;
  /** 32-byte AES-256-GCM key (config.secretsEncryptionKey). */
  encryptionKey: Buffer;
  logger: Logger;
}

/**
 * Workspace secrets. Values go in encrypted with the secret id as AAD and come out only through
 * `resolveValues` (the worker's internal route); every other method deals in metadata.
 * Reading needs the viewer role, writing the member role; other callers see 404.
 */
export class SecretService {
  private readonly repository: SecretRepository;
  private readonly encryptionKey: Buffer;
  private readonly logger: Logger;

  constructor(options: SecretServiceOptions) {
    this.repository = options.repository;
    this.encryptionKey = options.encryptionKey;
    this.logger = options.logger;
  }

  async list(ctx: RequestContext, input: ListSecretsInput): Promise<PageResult<Secret>> {
    requireWorkspaceRole(ctx, input.workspaceId, 'viewer');
    const page = toPage(input);
    const [rows, total] = await this.repository.listByWorkspace(input.workspaceId, page);
    return pageResult(rows.map(toSecret), total, page);
  }

  async get(ctx: RequestContext, input: SecretRefInput): Promise<Secret> {
    requireWorkspaceRole(ctx, input.workspaceId, 'viewer');
    return toSecret(await this.findOrFail(input));
  }

  async create(ctx: RequestContext, input: CreateSecretInput): Promise<Secret> {
    const principal = requireWorkspaceRole(ctx, input.workspaceId, 'member');
    const key = validateSecretKey(input.key);
    const value = validateSecretValue(input.value);
    const id = newId(ID_PREFIX.secret);
    const now = new Date();
    const row = {
      id,
      workspaceId: input.workspaceId,
      key,
      valueCiphertext: this.seal(id, value),
      createdByUserId: principal.userId,
      createdAt: now,
      updatedAt: now,
    };
    let inserted: boolean;
    try {
      inserted = await this.repository.insertWithinLimit(row, MAX_SECRETS_PER_WORKSPACE);
    } catch (err) {
      throw this.duplicateKeyOr(err, key);
    }
    if (!inserted) {
      throw new ConflictError(
        `Workspace ${input.workspaceId} already holds the maximum of ${MAX_SECRETS_PER_WORKSPACE} secrets; delete one before adding another`,
        { limit: MAX_SECRETS_PER_WORKSPACE },
      );
    }
    this.logger.info('secret created', { secretId: id, workspaceId: input.workspaceId, userId: principal.userId });
    return toSecret(row);
  }

  async update(ctx: RequestContext, input: UpdateSecretInput): Promise<Secret> {
    const principal = requireWorkspaceRole(ctx, input.workspaceId, 'member');
    const hasKey = input.key !== undefined && input.key !== null;
    const hasValue = input.value !== undefined && input.value !== null;
    if (!hasKey && !hasValue) throw new ValidationError('Give key, value or both', { field: 'key' });
    const patch: SecretPatch = {};
    if (hasKey) patch.key = validateSecretKey(input.key);
    if (hasValue) patch.valueCiphertext = this.seal(input.secretId, validateSecretValue(input.value));

    const row = await this.findOrFail(input);
    const updatedAt = new Date();
    let updated: boolean;
    try {
      updated = await this.repository.update(input.workspaceId, row.id, patch, updatedAt);
    } catch (err) {
      throw this.duplicateKeyOr(err, patch.key ?? row.key);
    }
    if (!updated) throw new NotFoundError('Secret', input.secretId); // deleted meanwhile
    this.logger.info('secret updated', { secretId: row.id, workspaceId: input.workspaceId, userId: principal.userId, keyChanged: hasKey, valueChanged: hasValue });
    return toSecret({ ...row, key: patch.key ?? row.key, updatedAt });
  }

  async delete(ctx: RequestContext, input: SecretRefInput): Promise<DeletedSecret> {
    const principal = requireWorkspaceRole(ctx, input.workspaceId, 'member');
    if (!hasPrefix(input.secretId, ID_PREFIX.secret) || !(await this.repository.delete(input.workspaceId, input.secretId))) {
      throw new NotFoundError('Secret', input.secretId);
    }
    this.logger.info('secret deleted', { secretId: input.secretId, workspaceId: input.workspaceId, userId: principal.userId });
    return toDeletedSecret(input.secretId);
  }

  /**
   * Plaintext values of the given keys, for the worker tier (sandbox secretRefs). Called only
   * through the subgraph's internal API, which requires a gateway-signed envelope. An envelope
   * that carries a user must be a member of the workspace; one without a user is the platform
   * itself (the worker acting on a job that the owning service already authorised).
   */
  async resolveValues(ctx: RequestContext, body: unknown): Promise<ResolvedSecretValues> {
    const input = parseResolveInput(body);
    if (ctx.principal) requireWorkspaceRole(ctx, input.workspaceId, 'member');
    const rows = await this.repository.findWithCiphertextByKeys(input.workspaceId, input.keys);
    const byKey = new Map(rows.map((row) => [row.key, row]));
    const missing = input.keys.filter((key) => !byKey.has(key));
    if (missing.length) throw new NotFoundError('Secret key', missing.join(', '));

    const values: Record<string, string> = {};
    for (const key of input.keys) values[key] = this.open(byKey.get(key)!);
    this.logger.info('secret values resolved', { workspaceId: input.workspaceId, keys: input.keys, userId: ctx.principal?.userId ?? null });
    return { values };
  }

  private async findOrFail(input: SecretRefInput) {
    const row = hasPrefix(input.secretId, ID_PREFIX.secret) ? await this.repository.findInWorkspace(input.workspaceId, input.secretId) : null;
    if (!row) throw new NotFoundError('Secret', input.secretId);
    return row;
  }

  /** The AAD is the secret id, so a ciphertext moved to another row does not decrypt. */
  private seal(secretId: string, value: string): string {
    return encrypt(this.encryptionKey, value, secretId);
  }

  private open(row: { id: string; workspaceId: string; valueCiphertext: string }): string {
    try {
      return decrypt(this.encryptionKey, row.valueCiphertext, row.id).toString('utf8');
    } catch {
      // Tampered, moved or encrypted under another key. Said without the ciphertext.
      this.logger.error('secret failed to decrypt', { secretId: row.id, workspaceId: row.workspaceId });
      throw new Error(`Secret ${row.id} could not be decrypted`);
    }
  }

  private duplicateKeyOr(err: unknown, key: string): unknown {
    if (isDuplicateKeyError(err)) return new ConflictError(`A secret with key "${key}" already exists in this workspace`, { field: 'key', key });
    return err;
  }
}

/** Most keys one resolve call may ask for. */
const MAX_KEYS_PER_RESOLVE = MAX_SECRETS_PER_WORKSPACE;

function parseResolveInput(body: unknown): { workspaceId: string; keys: string[] } {
  const { workspaceId, keys } = (body ?? {}) as { workspaceId?: unknown; keys?: unknown };
  if (typeof workspaceId !== 'string' || !workspaceId) throw new ValidationError('workspaceId is required', { field: 'workspaceId' });
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS_PER_RESOLVE) {
    throw new ValidationError(`keys must be a list of 1 to ${MAX_KEYS_PER_RESOLVE} secret keys`, { field: 'keys' });
  }
  return { workspaceId, keys: [...new Set(keys.map(validateSecretKey))] };
}
