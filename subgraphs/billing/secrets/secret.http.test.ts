import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { PlatformConfig } from '../../../core/config';
import { decrypt } from '../../../core/crypto';
import { ENVELOPE_HEADER, signEnvelope, type Principal } from '../../../core/principal';
import type { PlatformPubSub } from '../../../core/pubsub';
import { startSubgraph, type RunningSubgraph } from '../../../core/subgraph';
import { createTestDatabase, createTestRuntime, type TestDatabase } from '../../../test/services';
import { billingSubgraph } from '..';
import { MAX_SECRETS_PER_WORKSPACE, SECRET_VALUE_MAX_BYTES } from './secret.limits';

/*
 * SecretService over HTTP: a real billing subgraph on a database of its own, called the way the
 * gateway calls it (a signed envelope per request).
 */

const WS_A = 'ws_alphaworkspace0000001';
const WS_B = 'ws_bravoworkspace0000002';
const WS_FULL = 'ws_fullworkspace00000003';

function principal(userId: string, memberships: Principal['memberships']): Principal {
  return { userId, username: userId, isAdmin: false, via: 'jwt', defaultWorkspaceId: Object.keys(memberships)[0], memberships };
}

const alice = principal('usr_alice000000000000001', { [WS_A]: 'owner', [WS_FULL]: 'member' });
const bob = principal('usr_bob00000000000000002', { [WS_B]: 'owner' });
const viewer = principal('usr_viewer00000000000003', { [WS_A]: 'viewer' });

const SECRET_FIELDS = 'id key workspaceId createdAt updatedAt createdBy { __typename id }';
const CREATE = `mutation($workspaceId: ID!, $key: String!, $value: String!) { createSecret(workspaceId: $workspaceId, key: $key, value: $value) { ${SECRET_FIELDS} } }`;
const UPDATE = `mutation($workspaceId: ID!, $secretId: ID!, $key: String, $value: String) { updateSecret(workspaceId: $workspaceId, secretId: $secretId, key: $key, value: $value) { ${SECRET_FIELDS} } }`;
const DELETE = `mutation($workspaceId: ID!, $secretId: ID!) { deleteSecret(workspaceId: $workspaceId, secretId: $secretId) { id deleted } }`;
const GET = `query($workspaceId: ID!, $secretId: ID!) { secret(workspaceId: $workspaceId, secretId: $secretId) { ${SECRET_FIELDS} } }`;
const LIST = `query($workspaceId: ID!, $page: Int, $limit: Int) { secrets(workspaceId: $workspaceId, page: $page, limit: $limit) { total page limit data { ${SECRET_FIELDS} } } }`;

interface GraphQLResponse {
  status: number;
  text: string;
  data?: Record<string, any> | null;
  errors?: Array<{ message: string; extensions?: { code?: string; details?: Record<string, unknown> } }>;
}

let config: PlatformConfig;
let pubsub: PlatformPubSub;
let subgraph: RunningSubgraph;
let pg: Client;
let database: TestDatabase;
let baseUrl: string;
/** Every line the subgraph logged (at debug level), kept from the terminal; checked for plaintext last. */
const logged: string[] = [];
/** Every plaintext value this file stored. */
const plaintexts: string[] = [];
let stderrSpy: jest.SpyInstance;

beforeAll(async () => {
  database = await createTestDatabase('t_billing_secrets');
  const runtime = createTestRuntime({ databaseUrl: database.url, prefix: database.name, env: { LOG_LEVEL: 'error' }, logLevel: 'debug' });
  ({ config, pubsub } = runtime);
  stderrSpy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    logged.push(String(chunk));
    return true;
  });
  subgraph = await startSubgraph(billingSubgraph, runtime, 0);
  baseUrl = subgraph.url.replace(/\/graphql$/, '');
  pg = new Client({ connectionString: database.url });
  await pg.connect();
});

afterAll(async () => {
  await pg?.end();
  await subgraph?.stop();
  await pubsub?.close();
  await database?.drop();
  stderrSpy?.mockRestore();
});

function envelopeFor(who: Principal | null): string {
  return signEnvelope(config.internalSigningSecret, { principal: who, requestId: `req_${randomBytes(4).toString('hex')}`, clientIp: '127.0.0.1', iat: Math.floor(Date.now() / 1000) });
}

async function gql(who: Principal | null, query: string, variables: Record<string, unknown> = {}, headers?: Record<string, string>): Promise<GraphQLResponse> {
  const res = await fetch(subgraph.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(headers ?? { [ENVELOPE_HEADER]: envelopeFor(who) }) },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  return { status: res.status, text, ...JSON.parse(text) };
}

async function internal(who: Principal | null, path: string, body: unknown, withEnvelope = true) {
  const res = await fetch(`${baseUrl}/internal/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(withEnvelope ? { [ENVELOPE_HEADER]: envelopeFor(who) } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) };
}

function errorCode(res: GraphQLResponse): string | undefined {
  return res.errors?.[0]?.extensions?.code;
}

/** A plaintext that no id, key or timestamp could contain by chance. */
function plaintext(label: string): string {
  const value = `${label}-${randomBytes(12).toString('hex')}-plaintext`;
  plaintexts.push(value);
  return value;
}

async function createSecret(who: Principal, workspaceId: string, key: string, value: string) {
  const res = await gql(who, CREATE, { workspaceId, key, value });
  expect(res.errors).toBeUndefined();
  return res.data!.createSecret;
}

async function resolveValues(who: Principal | null, workspaceId: string, keys: string[]): Promise<Record<string, string>> {
  const res = await internal(who, 'secrets/resolve', { workspaceId, keys });
  expect(res.status).toBe(200);
  return res.json.data.values;
}

describe('create, read, update, delete', () => {
  it('creates a secret and answers its metadata, never the value', async () => {
    const value = plaintext('create');
    const res = await gql(alice, CREATE, { workspaceId: WS_A, key: 'DATABASE_URL', value });
    expect(res.errors).toBeUndefined();
    const secret = res.data!.createSecret;
    expect(secret).toEqual({
      id: expect.stringMatching(/^sec_[0-9a-z]{20}$/),
      key: 'DATABASE_URL',
      workspaceId: WS_A,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      createdBy: { __typename: 'User', id: alice.userId },
    });
    expect(new Date(secret.createdAt).toISOString()).toBe(secret.createdAt);
    expect(secret.updatedAt).toBe(secret.createdAt);
    expect(res.text).not.toContain(value);
  });

  it('has no field that could return the value', async () => {
    const res = await gql(alice, '{ __type(name: "Secret") { fields { name } } }');
    const fields = res.data!.__type.fields.map((f: { name: string }) => f.name).sort();
    expect(fields).toEqual(['createdAt', 'createdBy', 'id', 'key', 'updatedAt', 'workspaceId']);
  });

  it('gets, renames, re-values and deletes a secret', async () => {
    const value = plaintext('crud');
    const created = await createSecret(alice, WS_A, 'CRUD_KEY', value);

    const got = await gql(alice, GET, { workspaceId: WS_A, secretId: created.id });
    expect(got.data!.secret).toEqual(created);
    expect(got.text).not.toContain(value);

    await new Promise((r) => setTimeout(r, 5));
    const renamed = await gql(alice, UPDATE, { workspaceId: WS_A, secretId: created.id, key: 'CRUD_KEY_RENAMED' });
    expect(renamed.errors).toBeUndefined();
    expect(renamed.data!.updateSecret).toMatchObject({ id: created.id, key: 'CRUD_KEY_RENAMED', createdAt: created.createdAt });
    expect(renamed.data!.updateSecret.updatedAt > created.updatedAt).toBe(true);
    expect(await resolveValues(alice, WS_A, ['CRUD_KEY_RENAMED'])).toEqual({ CRUD_KEY_RENAMED: value });

    const newValue = plaintext('crud-new');
    const revalued = await gql(alice, UPDATE, { workspaceId: WS_A, secretId: created.id, value: newValue });
    expect(revalued.errors).toBeUndefined();
    expect(revalued.data!.updateSecret.key).toBe('CRUD_KEY_RENAMED');
    expect(revalued.text).not.toContain(newValue);
    expect(await resolveValues(alice, WS_A, ['CRUD_KEY_RENAMED'])).toEqual({ CRUD_KEY_RENAMED: newValue });

    const both = await gql(alice, UPDATE, { workspaceId: WS_A, secretId: created.id, key: 'CRUD_BOTH', value: value });
    expect(both.data!.updateSecret.key).toBe('CRUD_BOTH');
    expect(await resolveValues(alice, WS_A, ['CRUD_BOTH'])).toEqual({ CRUD_BOTH: value });

    const deleted = await gql(alice, DELETE, { workspaceId: WS_A, secretId: created.id });
    expect(deleted.data!.deleteSecret).toEqual({ id: created.id, deleted: true });
    expect(errorCode(await gql(alice, GET, { workspaceId: WS_A, secretId: created.id }))).toBe('NOT_FOUND');
    expect(errorCode(await gql(alice, DELETE, { workspaceId: WS_A, secretId: created.id }))).toBe('NOT_FOUND');
    expect(errorCode(await gql(alice, UPDATE, { workspaceId: WS_A, secretId: created.id, key: 'X' }))).toBe('NOT_FOUND');
    const { rowCount } = await pg.query('SELECT 1 FROM billing.secrets WHERE id = $1', [created.id]);
    expect(rowCount).toBe(0);
  });

  it('refuses an update that changes nothing', async () => {
    const created = await createSecret(alice, WS_A, 'NOTHING_TO_CHANGE', plaintext('nothing'));
    const res = await gql(alice, UPDATE, { workspaceId: WS_A, secretId: created.id });
    expect(errorCode(res)).toBe('VALIDATION_FAILED');
    const nulls = await gql(alice, UPDATE, { workspaceId: WS_A, secretId: created.id, key: null, value: null });
    expect(errorCode(nulls)).toBe('VALIDATION_FAILED');
  });

  it('answers 404 for ids that are not secrets or do not exist', async () => {
    for (const secretId of ['sec_doesnotexist00000000', 'usr_alice000000000000001', 'x']) {
      expect(errorCode(await gql(alice, GET, { workspaceId: WS_A, secretId }))).toBe('NOT_FOUND');
    }
  });
});

describe('lists', () => {
  const WS_LIST = 'ws_listworkspace00000004';
  const lister = principal('usr_lister00000000000004', { [WS_LIST]: 'member' });

  it('pages newest first with data, total, page and limit', async () => {
    const keys = ['L1', 'L2', 'L3', 'L4', 'L5'];
    for (const key of keys) {
      await createSecret(lister, WS_LIST, key, plaintext(key));
      await new Promise((r) => setTimeout(r, 3));
    }
    const all = await gql(lister, LIST, { workspaceId: WS_LIST });
    expect(all.data!.secrets).toMatchObject({ total: 5, page: 1, limit: 20 });
    expect(all.data!.secrets.data.map((s: { key: string }) => s.key)).toEqual(['L5', 'L4', 'L3', 'L2', 'L1']);

    const page2 = await gql(lister, LIST, { workspaceId: WS_LIST, page: 2, limit: 2 });
    expect(page2.data!.secrets).toMatchObject({ total: 5, page: 2, limit: 2 });
    expect(page2.data!.secrets.data.map((s: { key: string }) => s.key)).toEqual(['L3', 'L2']);

    const past = await gql(lister, LIST, { workspaceId: WS_LIST, page: 9, limit: 2 });
    expect(past.data!.secrets).toMatchObject({ total: 5, page: 9, data: [] });
  });

  it('rejects a limit over 100 and a page under 1', async () => {
    const tooMany = await gql(lister, LIST, { workspaceId: WS_LIST, limit: 101 });
    expect(errorCode(tooMany)).toBe('VALIDATION_FAILED');
    expect(tooMany.errors![0].extensions!.details).toMatchObject({ field: 'limit' });
    expect(errorCode(await gql(lister, LIST, { workspaceId: WS_LIST, limit: 0 }))).toBe('VALIDATION_FAILED');
    expect(errorCode(await gql(lister, LIST, { workspaceId: WS_LIST, page: 0 }))).toBe('VALIDATION_FAILED');
    expect((await gql(lister, LIST, { workspaceId: WS_LIST, limit: 100 })).errors).toBeUndefined();
  });
});

describe('validation and conflicts', () => {
  it('answers 409 for a duplicate key, on create and on rename', async () => {
    const value = plaintext('dup');
    await createSecret(alice, WS_A, 'DUP_KEY', plaintext('first'));
    const dup = await gql(alice, CREATE, { workspaceId: WS_A, key: 'DUP_KEY', value });
    expect(errorCode(dup)).toBe('CONFLICT');
    expect(dup.errors![0].message).toContain('DUP_KEY');
    expect(dup.text).not.toContain(value);

    const other = await createSecret(alice, WS_A, 'OTHER_KEY', plaintext('other'));
    const rename = await gql(alice, UPDATE, { workspaceId: WS_A, secretId: other.id, key: 'DUP_KEY', value });
    expect(errorCode(rename)).toBe('CONFLICT');
    expect(rename.text).not.toContain(value);
    expect((await gql(alice, GET, { workspaceId: WS_A, secretId: other.id })).data!.secret.key).toBe('OTHER_KEY');

    // The same key in another workspace is a different secret.
    await createSecret(bob, WS_B, 'DUP_KEY', plaintext('bob'));
    // Renaming to its own key is not a conflict.
    expect((await gql(alice, UPDATE, { workspaceId: WS_A, secretId: other.id, key: 'OTHER_KEY' })).errors).toBeUndefined();
  });

  it.each([
    ['starts with a digit', '1ABC'],
    ['has a space', 'HAS SPACE'],
    ['is empty', ''],
    ['has a slash', 'a/b'],
    ['is longer than 128', `K${'x'.repeat(128)}`],
  ])('rejects a key that %s', async (_why, key) => {
    const value = plaintext('badkey');
    const res = await gql(alice, CREATE, { workspaceId: WS_A, key, value });
    expect(errorCode(res)).toBe('VALIDATION_FAILED');
    expect(res.errors![0].extensions!.details).toMatchObject({ field: 'key' });
    expect(res.text).not.toContain(value);
  });

  it('accepts the longest key and env-var style keys with dots and dashes', async () => {
    await createSecret(alice, WS_A, `K${'x'.repeat(127)}`, plaintext('long'));
    await createSecret(alice, WS_A, '_db.password-2', plaintext('dotted'));
  });

  it('rejects an empty value and one over the byte limit, counting UTF-8 bytes', async () => {
    const empty = await gql(alice, CREATE, { workspaceId: WS_A, key: 'EMPTY_VALUE', value: '' });
    expect(errorCode(empty)).toBe('VALIDATION_FAILED');
    expect(empty.errors![0].extensions!.details).toMatchObject({ field: 'value' });

    const oversized = 'v'.repeat(SECRET_VALUE_MAX_BYTES + 1);
    const big = await gql(alice, CREATE, { workspaceId: WS_A, key: 'BIG_VALUE', value: oversized });
    expect(errorCode(big)).toBe('VALIDATION_FAILED');
    expect(big.errors![0].extensions!.details).toMatchObject({ field: 'value' });
    expect(big.text).not.toContain('vvvvvvvvvv');

    // 32,769 two-byte characters: fewer characters than the limit, more bytes.
    const wide = await gql(alice, CREATE, { workspaceId: WS_A, key: 'WIDE_VALUE', value: 'é'.repeat(SECRET_VALUE_MAX_BYTES / 2 + 1) });
    expect(errorCode(wide)).toBe('VALIDATION_FAILED');

    const exact = await createSecret(alice, WS_A, 'EXACT_VALUE', 'é'.repeat(SECRET_VALUE_MAX_BYTES / 2));
    const updateBig = await gql(alice, UPDATE, { workspaceId: WS_A, secretId: exact.id, value: oversized });
    expect(errorCode(updateBig)).toBe('VALIDATION_FAILED');
    const updateEmpty = await gql(alice, UPDATE, { workspaceId: WS_A, secretId: exact.id, value: '' });
    expect(errorCode(updateEmpty)).toBe('VALIDATION_FAILED');
    expect(await resolveValues(alice, WS_A, ['EXACT_VALUE'])).toEqual({ EXACT_VALUE: 'é'.repeat(SECRET_VALUE_MAX_BYTES / 2) });
  });

  it(`refuses the secret after the ${MAX_SECRETS_PER_WORKSPACE}th of a workspace with 409`, async () => {
    await pg.query(
      `INSERT INTO billing.secrets (id, workspace_id, key, value_ciphertext, created_by_user_id)
       SELECT 'sec_fill' || lpad(n::text, 16, '0'), $1, 'FILL_' || n, 'v1.x.y.z', $2 FROM generate_series(1, $3::int - 1) AS n`,
      [WS_FULL, alice.userId, MAX_SECRETS_PER_WORKSPACE],
    );
    await createSecret(alice, WS_FULL, 'LAST_ONE', plaintext('last'));
    const over = await gql(alice, CREATE, { workspaceId: WS_FULL, key: 'ONE_TOO_MANY', value: plaintext('over') });
    expect(errorCode(over)).toBe('CONFLICT');
    expect(over.errors![0].message).toMatch(/maximum of 1000 secrets/);
    const list = await gql(alice, LIST, { workspaceId: WS_FULL, limit: 1 });
    expect(list.data!.secrets.total).toBe(MAX_SECRETS_PER_WORKSPACE);
  });

  it('holds the limit when creates race each other', async () => {
    const WS_RACE = 'ws_raceworkspace00000007';
    const racer = principal('usr_racer000000000000007', { [WS_RACE]: 'member' });
    await pg.query(
      `INSERT INTO billing.secrets (id, workspace_id, key, value_ciphertext, created_by_user_id)
       SELECT 'sec_race' || lpad(n::text, 16, '0'), $1, 'RACE_' || n, 'v1.x.y.z', $2 FROM generate_series(1, $3::int - 5) AS n`,
      [WS_RACE, racer.userId, MAX_SECRETS_PER_WORKSPACE],
    );
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => gql(racer, CREATE, { workspaceId: WS_RACE, key: `RACER_${i}`, value: plaintext('race') })),
    );
    expect(results.filter((r) => !r.errors).length).toBe(5);
    expect(results.filter((r) => errorCode(r) === 'CONFLICT').length).toBe(7);
    const { rows } = await pg.query('SELECT count(*)::int AS n FROM billing.secrets WHERE workspace_id = $1', [WS_RACE]);
    expect(rows[0].n).toBe(MAX_SECRETS_PER_WORKSPACE);
  });
});

describe('access', () => {
  it('answers 404 to a member of another workspace for list, get, update and delete, and changes nothing', async () => {
    const value = plaintext('isolated');
    const secret = await createSecret(alice, WS_A, 'ISOLATED', value);
    const before = (await pg.query('SELECT * FROM billing.secrets WHERE id = $1', [secret.id])).rows[0];

    const attempts = [
      await gql(bob, LIST, { workspaceId: WS_A }),
      await gql(bob, GET, { workspaceId: WS_A, secretId: secret.id }),
      await gql(bob, UPDATE, { workspaceId: WS_A, secretId: secret.id, key: 'STOLEN', value: 'overwritten' }),
      await gql(bob, DELETE, { workspaceId: WS_A, secretId: secret.id }),
      await gql(bob, CREATE, { workspaceId: WS_A, key: 'INTRUDER', value: 'x' }),
      // His own workspace with her secret's id.
      await gql(bob, GET, { workspaceId: WS_B, secretId: secret.id }),
      await gql(bob, UPDATE, { workspaceId: WS_B, secretId: secret.id, key: 'STOLEN' }),
      await gql(bob, DELETE, { workspaceId: WS_B, secretId: secret.id }),
    ];
    for (const res of attempts) {
      expect(errorCode(res)).toBe('NOT_FOUND');
      expect(res.data ?? null).toBeNull();
      expect(res.text).not.toContain('ISOLATED');
      expect(res.text).not.toContain(value);
    }
    const resolved = await internal(bob, 'secrets/resolve', { workspaceId: WS_A, keys: ['ISOLATED'] });
    expect(resolved.status).toBe(404);
    expect(resolved.text).not.toContain(value);

    const after = (await pg.query('SELECT * FROM billing.secrets WHERE id = $1', [secret.id])).rows[0];
    expect(after).toEqual(before);
    expect((await gql(alice, GET, { workspaceId: WS_A, secretId: secret.id })).data!.secret).toEqual(secret);
    expect(await resolveValues(alice, WS_A, ['ISOLATED'])).toEqual({ ISOLATED: value });
    const { rowCount } = await pg.query(`SELECT 1 FROM billing.secrets WHERE key IN ('STOLEN', 'INTRUDER')`);
    expect(rowCount).toBe(0);
  });

  it('lets a viewer read but not write (403)', async () => {
    const secret = await createSecret(alice, WS_A, 'VIEWED', plaintext('viewed'));
    expect((await gql(viewer, GET, { workspaceId: WS_A, secretId: secret.id })).data!.secret.key).toBe('VIEWED');
    expect((await gql(viewer, LIST, { workspaceId: WS_A })).errors).toBeUndefined();
    expect(errorCode(await gql(viewer, CREATE, { workspaceId: WS_A, key: 'BY_VIEWER', value: 'x' }))).toBe('FORBIDDEN');
    expect(errorCode(await gql(viewer, UPDATE, { workspaceId: WS_A, secretId: secret.id, key: 'BY_VIEWER' }))).toBe('FORBIDDEN');
    expect(errorCode(await gql(viewer, DELETE, { workspaceId: WS_A, secretId: secret.id }))).toBe('FORBIDDEN');
    expect((await gql(alice, GET, { workspaceId: WS_A, secretId: secret.id })).data!.secret.key).toBe('VIEWED');
  });

  it('answers 401 to a request without a principal', async () => {
    expect(errorCode(await gql(null, LIST, { workspaceId: WS_A }))).toBe('UNAUTHENTICATED');
  });

  it('refuses any request without an envelope signed with the internal secret (401)', async () => {
    const none = await gql(alice, LIST, { workspaceId: WS_A }, {});
    expect(none.status).toBe(401);
    const forged = signEnvelope('not-the-internal-signing-secret-0000', { principal: alice, requestId: 'r', clientIp: '127.0.0.1', iat: Math.floor(Date.now() / 1000) });
    const bad = await gql(alice, LIST, { workspaceId: WS_A }, { [ENVELOPE_HEADER]: forged });
    expect(bad.status).toBe(401);
    expect(bad.errors![0].extensions!.code).toBe('UNAUTHENTICATED');
    const stale = signEnvelope(config.internalSigningSecret, { principal: alice, requestId: 'r', clientIp: '127.0.0.1', iat: Math.floor(Date.now() / 1000) - 3600 });
    expect((await gql(alice, LIST, { workspaceId: WS_A }, { [ENVELOPE_HEADER]: stale })).status).toBe(401);

    const internalCall = await internal(alice, 'secrets/resolve', { workspaceId: WS_A, keys: ['DATABASE_URL'] }, false);
    expect(internalCall.status).toBe(401);
    expect(internalCall.json.error.code).toBe('UNAUTHENTICATED');
    expect(internalCall.text).not.toContain('plaintext');
  });
});

describe('storage', () => {
  it('keeps no plaintext in the row, and the ciphertext decrypts only with its own id', async () => {
    const value = plaintext('at-rest');
    const secret = await createSecret(alice, WS_A, 'AT_REST', value);
    const { rows } = await pg.query('SELECT * FROM billing.secrets WHERE id = $1', [secret.id]);
    expect(Object.keys(rows[0]).sort()).toEqual(['created_at', 'created_by_user_id', 'id', 'key', 'updated_at', 'value_ciphertext', 'workspace_id']);
    const everything = JSON.stringify(rows[0]);
    for (const form of [value, Buffer.from(value).toString('base64'), Buffer.from(value).toString('base64url'), Buffer.from(value).toString('hex')]) {
      expect(everything).not.toContain(form);
    }
    const stored: string = rows[0].value_ciphertext;
    expect(stored).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);

    expect(decrypt(config.secretsEncryptionKey, stored, secret.id).toString('utf8')).toBe(value);
    expect(() => decrypt(config.secretsEncryptionKey, stored)).toThrow();
    expect(() => decrypt(config.secretsEncryptionKey, stored, 'sec_someotherid000000000')).toThrow();
    expect(() => decrypt(Buffer.alloc(32, 1), stored, secret.id)).toThrow();

    // Two secrets with the same value do not share a ciphertext (a nonce per value).
    const twin = await createSecret(alice, WS_A, 'AT_REST_TWIN', value);
    const twinStored = (await pg.query('SELECT value_ciphertext FROM billing.secrets WHERE id = $1', [twin.id])).rows[0].value_ciphertext;
    expect(twinStored).not.toBe(stored);
  });

  it('fails to decrypt a tampered ciphertext or one moved to another row', async () => {
    const victim = await createSecret(alice, WS_A, 'TAMPERED', plaintext('tampered'));
    const donor = await createSecret(alice, WS_A, 'DONOR', plaintext('donor'));
    const stored: string = (await pg.query('SELECT value_ciphertext FROM billing.secrets WHERE id = $1', [victim.id])).rows[0].value_ciphertext;

    const [version, nonce, tag, body] = stored.split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] ^= 0x01;
    const tampered = [version, nonce, tag, flipped.toString('base64url')].join('.');
    expect(() => decrypt(config.secretsEncryptionKey, tampered, victim.id)).toThrow();
    await pg.query('UPDATE billing.secrets SET value_ciphertext = $2 WHERE id = $1', [victim.id, tampered]);
    const tamperedRes = await internal(alice, 'secrets/resolve', { workspaceId: WS_A, keys: ['TAMPERED'] });
    expect(tamperedRes.status).toBe(500);
    expect(tamperedRes.json.error).toMatchObject({ code: 'INTERNAL', message: 'Internal server error' });

    // The donor's valid ciphertext copied onto the victim's row: AAD is the victim's id now.
    await pg.query('UPDATE billing.secrets SET value_ciphertext = (SELECT value_ciphertext FROM billing.secrets WHERE id = $2) WHERE id = $1', [victim.id, donor.id]);
    const moved = await internal(alice, 'secrets/resolve', { workspaceId: WS_A, keys: ['TAMPERED'] });
    expect(moved.status).toBe(500);
    expect(moved.text).not.toContain('donor');
  });
});

describe('internal resolve route', () => {
  const WS_RESOLVE = 'ws_resolveworkspace00005';
  const owner = principal('usr_resolver000000000005', { [WS_RESOLVE]: 'member' });
  const onlyViewer = principal('usr_resolveviewer0000006', { [WS_RESOLVE]: 'viewer' });

  it('returns the values of the asked keys, for a member or for the platform itself', async () => {
    const token = plaintext('token');
    const password = `pässwörd 🔑 ${plaintext('unicode')}`;
    await createSecret(owner, WS_RESOLVE, 'API_TOKEN', token);
    await createSecret(owner, WS_RESOLVE, 'DB_PASSWORD', password);
    await createSecret(owner, WS_RESOLVE, 'NOT_ASKED', plaintext('not-asked'));

    expect(await resolveValues(owner, WS_RESOLVE, ['API_TOKEN', 'DB_PASSWORD'])).toEqual({ API_TOKEN: token, DB_PASSWORD: password });
    expect(await resolveValues(null, WS_RESOLVE, ['DB_PASSWORD', 'DB_PASSWORD'])).toEqual({ DB_PASSWORD: password });
  });

  it('names unknown keys in a 404 and returns nothing then', async () => {
    const res = await internal(owner, 'secrets/resolve', { workspaceId: WS_RESOLVE, keys: ['API_TOKEN', 'MISSING_ONE'] });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('NOT_FOUND');
    expect(res.json.error.message).toContain('MISSING_ONE');
    expect(res.json.data).toBeUndefined();
  });

  it('refuses other workspaces, viewers and malformed bodies', async () => {
    expect((await internal(bob, 'secrets/resolve', { workspaceId: WS_RESOLVE, keys: ['API_TOKEN'] })).status).toBe(404);
    expect((await internal(onlyViewer, 'secrets/resolve', { workspaceId: WS_RESOLVE, keys: ['API_TOKEN'] })).status).toBe(403);
    for (const body of [{}, { workspaceId: WS_RESOLVE }, { workspaceId: WS_RESOLVE, keys: [] }, { workspaceId: WS_RESOLVE, keys: ['bad key'] }, { workspaceId: 5, keys: ['A'] }]) {
      const res = await internal(null, 'secrets/resolve', body);
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('VALIDATION_FAILED');
    }
  });
});

describe('logs', () => {
  it('never carried a plaintext value, whatever happened above', () => {
    expect(logged.some((line) => line.includes('secret failed to decrypt'))).toBe(true);
    expect(logged.some((line) => line.includes('secret created'))).toBe(true);
    const all = logged.join('');
    for (const value of plaintexts) expect(all).not.toContain(value);
  });
});
