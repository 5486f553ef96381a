// The admin CLI. Each command prints one JSON object on stdout and exits 0, or prints an
// error on stderr and exits non-zero (1: failed, 2: usage). It uses DATABASE_URL/DATA_DIR
// like the server, and attaches to the embedded database when the server is running.
// SIGTERM/SIGINT do not cut a command short (each is one short transaction): it finishes, the
// database is closed (the embedded PostgreSQL stopped if this process started it) and the exit
// code is the command's. A second signal exits at once.
// `main` is the process (admin.ts calls it); `runAdmin` is one command with its output and exit
// code, which the tests also call in their own process (a CLI process costs ~1 s of CPU to start).
import fs from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { ValidateFunction } from 'ajv';
import requestValidators from '../../generated/request-validators.cjs';
import { ApiError } from '../errors.ts';
import { createStorage, type Storage } from '../storage/index.ts';
import { sharedSecret } from '../services/platform/secrets.ts';
import {
  avatarView,
  brandKitView,
  COLOR_ROLES,
  createAvatar,
  createBrandKit,
  createVoice,
  customVoiceView,
  deleteAvatar,
  deleteBrandKit,
  deleteVoice,
  listAvatars,
  listBrandKits,
  listVoices,
  VOICE_SAMPLE_MAX_BYTES,
  type AssetDeps,
} from '../services/assets/workspace-assets.ts';
import { handleSignals } from '../lifecycle.ts';
import { loadConfig, type Config } from '../config.ts';
import { openDatabase, type Database } from '../db/client.ts';
import { createApiKey, revokeApiKey, validateScopes } from '../services/workspaces/api-keys.ts';
import { checkEmail, checkPassword, createMember, MemberError } from '../services/oauth/members.ts';
import { listGrants, revokeGrantById } from '../services/oauth/oauth.ts';
import { pendingReviews, reviewReference } from '../services/references/references.ts';
import {
  connectAccount,
  describeAccount,
  disconnectAccount,
  isSocialPlatform,
  listAccounts,
  SOCIAL_PLATFORMS,
} from '../services/social/accounts.ts';
import { loadTokenKey, tokenCipher } from '../services/social/token-crypto.ts';
import { createOrganization, getOrganization, grantCredits, isUuid, setPlan, type Plan } from '../services/workspaces/organizations.ts';

const USAGE = `Usage: npm run -s admin -- <command>
  org create --name NAME [--credits N] [--plan paid|none]
  org set-plan --org ID --plan paid|none
  credits grant --org ID --amount N
  key create --org ID --scopes a,b [--expires-in SECONDS] [--name NAME]
  key revoke --id KEY_ID
  member create --org ID --email EMAIL --password PASSWORD
  grant list --org ID        the apps members connected over OAuth (MCP clients)
  grant revoke --id GRANT_ID disconnect one: its tokens stop working at once
  reference pending          public reference inspirations waiting for review
  reference review --id ID --decision approve|reject [--reason TEXT]
  social connect --org ID --platform ${SOCIAL_PLATFORMS.join('|')}
                 --handle NAME --access-token TOKEN [--refresh-token TOKEN] [--expires-in SECONDS]
                 [--account-id PLATFORM_ACCOUNT_ID] [--display-name NAME] [--scopes a,b]
  social list --org ID       the workspace's connected social accounts (never their tokens)
  social disconnect --id ID  forget a connection and its tokens
  brand-kit create --org ID --name NAME [--colors primary=#RRGGBB,accent=#RRGGBB,…] [--fonts "DejaVu Serif,DejaVu Sans"] [--logo FILE]
  brand-kit list --org ID
  brand-kit delete --org ID --id KIT_ID
  avatar create --org ID --name NAME --image FILE   a portrait (PNG, JPEG, WebP), cropped square on the face
  avatar list --org ID
  avatar delete --org ID --id AVATAR_ID
  voice create --org ID --name NAME --language TAG --sample FILE   a 3–60 s WAV, MP3 or M4A sample
  voice list --org ID
  voice delete --org ID --id VOICE_ID`;

class UsageError extends Error {}
class CommandError extends Error {}

type Opts = Record<string, string | undefined>;

function need(opts: Opts, name: string): string {
  const v = opts[name];
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

function nonNegativeInt(name: string, raw: string, min = 0): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new UsageError(`--${name} must be an integer ≥ ${min}, got "${raw}"`);
  }
  return Number(raw);
}

function plan(raw: string): Plan {
  if (raw !== 'paid' && raw !== 'none') throw new UsageError(`--plan must be paid or none, got "${raw}"`);
  return raw;
}

function orgId(raw: string): string {
  if (!isUuid(raw)) throw new CommandError(`organization ${raw} not found (ids are UUIDs)`);
  return raw;
}

const validators = requestValidators as unknown as Record<string, ValidateFunction>;

/** The body checked with the operation's generated validator (as the API checks it), or a usage error naming the option. */
function checked<T>(operationId: string, body: Record<string, unknown>): T {
  const v = validators[operationId];
  if (!v(body)) {
    const e = v.errors?.[0];
    const where = (e?.instancePath ?? '').split('/').filter(Boolean);
    const option = where[0] ? `--${where[0]}` : 'the options';
    const extra =
      e?.keyword === 'enum'
        ? ` (one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')})`
        : e?.keyword === 'additionalProperties'
          ? ` (${(e.params as { additionalProperty: string }).additionalProperty})`
          : '';
    throw new UsageError(`${option}${where.length > 1 ? ` ${where.slice(1).join('.')}` : ''} ${e?.message ?? 'is invalid'}${extra}`);
  }
  return body as T;
}

/** A file's bytes as base64, refused past `max` bytes before it is read. */
async function fileBase64(option: string, file: string, max: number): Promise<string> {
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat?.isFile()) throw new UsageError(`--${option}: ${file} is not a readable file`);
  if (stat.size > max) throw new CommandError(`--${option}: ${file} is larger than ${max} bytes`);
  return (await fs.readFile(file)).toString('base64');
}

/** The service's API errors as the CLI's: a 400 or 404 fails the command with its message. */
async function asCommand<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof ApiError) throw new CommandError(err.message);
    throw err;
  }
}

/** What a command works with: its options, the configuration, and the database and storage (opened on first use). */
interface CommandContext {
  opts: Opts;
  config: Config;
  database: () => Promise<Database>;
  storageOf: (db: Database) => Promise<Storage>;
}

type Command = (ctx: CommandContext) => Promise<unknown>;

/** The options every command may take (each command reads the ones it needs). */
const OPTIONS = {
  name: { type: 'string' },
  credits: { type: 'string' },
  plan: { type: 'string' },
  org: { type: 'string' },
  amount: { type: 'string' },
  scopes: { type: 'string' },
  'expires-in': { type: 'string' },
  id: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  decision: { type: 'string' },
  reason: { type: 'string' },
  platform: { type: 'string' },
  handle: { type: 'string' },
  'access-token': { type: 'string' },
  'refresh-token': { type: 'string' },
  'account-id': { type: 'string' },
  'display-name': { type: 'string' },
  colors: { type: 'string' },
  fonts: { type: 'string' },
  logo: { type: 'string' },
  image: { type: 'string' },
  sample: { type: 'string' },
  language: { type: 'string' },
} as const;

async function run(
  argv: string[],
  config: Config,
  database: () => Promise<Database>,
  storageOf: (db: Database) => Promise<Storage>,
): Promise<unknown> {
  const [group, action, ...rest] = argv;
  const { values } = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: false });
  const command = `${group ?? ''} ${action ?? ''}`.trim();
  const handler = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!handler) throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  return handler({ opts: values as Opts, config, database, storageOf });
}

/** The organization's id, refused when no such organization exists. */
async function existingOrg(db: Database['db'], id: string): Promise<void> {
  if (!(await getOrganization(db, id))) throw new CommandError(`organization ${id} not found`);
}

async function orgCreate({ opts, database }: CommandContext) {
  const name = need(opts, 'name');
  const credits = opts.credits !== undefined ? nonNegativeInt('credits', opts.credits) : 0;
  const p = opts.plan !== undefined ? plan(opts.plan) : 'paid';
  const { db } = await database();
  return createOrganization(db, { name, credits, plan: p });
}

async function orgSetPlan({ opts, database }: CommandContext) {
  const id = orgId(need(opts, 'org'));
  const p = plan(need(opts, 'plan'));
  const { db } = await database();
  const org = await setPlan(db, id, p);
  if (!org) throw new CommandError(`organization ${id} not found`);
  return org;
}

async function creditsGrant({ opts, database }: CommandContext) {
  const id = orgId(need(opts, 'org'));
  const amount = nonNegativeInt('amount', need(opts, 'amount'), 1);
  const { db } = await database();
  const credits = await grantCredits(db, id, amount);
  if (credits === undefined) throw new CommandError(`organization ${id} not found`);
  return { object: 'credit_balance', org: id, credits };
}

/** --scopes as a list of known scopes, or a usage error. */
function scopesOption(opts: Opts): string[] {
  try {
    return validateScopes(
      need(opts, 'scopes')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
  } catch (err) {
    throw new UsageError(`--scopes: ${(err as Error).message}`);
  }
}

async function keyCreate({ opts, database }: CommandContext) {
  const id = orgId(need(opts, 'org'));
  const scopes = scopesOption(opts);
  const expiresIn = opts['expires-in'] !== undefined ? nonNegativeInt('expires-in', opts['expires-in'], 1) : undefined;
  const { db } = await database();
  await existingOrg(db, id);
  const key = await createApiKey(db, { orgId: id, scopes, expiresInSeconds: expiresIn, name: opts.name });
  return {
    object: 'api_key',
    id: key.id,
    key: key.key,
    scopes: key.scopes,
    org: id,
    expires_at: key.expiresAt ? key.expiresAt.toISOString() : null,
  };
}

async function keyRevoke({ opts, database }: CommandContext) {
  const id = need(opts, 'id');
  if (!isUuid(id)) throw new CommandError(`api key ${id} not found`);
  const { db } = await database();
  if (!(await revokeApiKey(db, id))) throw new CommandError(`api key ${id} not found`);
  return { object: 'api_key', id, revoked: true };
}

async function memberCreate({ opts, database }: CommandContext) {
  const id = orgId(need(opts, 'org'));
  const password = need(opts, 'password');
  let email: string;
  try {
    email = checkEmail(need(opts, 'email'));
    checkPassword(password);
  } catch (err) {
    if (err instanceof MemberError) throw new UsageError(err.message);
    throw err;
  }
  const { db } = await database();
  try {
    return await createMember(db, { orgId: id, email, password });
  } catch (err) {
    if (err instanceof MemberError) throw new CommandError(err.message);
    throw err;
  }
}

async function grantList({ opts, database }: CommandContext) {
  const id = orgId(need(opts, 'org'));
  const { db } = await database();
  await existingOrg(db, id);
  return { object: 'list', org: id, data: await listGrants(db, { orgId: id }) };
}

async function grantRevoke({ opts, database }: CommandContext) {
  const id = need(opts, 'id');
  const { db } = await database();
  if (!(await revokeGrantById(db, id))) throw new CommandError(`grant ${id} not found`);
  return { object: 'oauth_grant', id, revoked: true };
}

async function referencePending({ database }: CommandContext) {
  const { db } = await database();
  return { object: 'list', data: await pendingReviews(db) };
}

async function referenceReview({ opts, database }: CommandContext) {
  const id = need(opts, 'id');
  const decision = need(opts, 'decision');
  if (decision !== 'approve' && decision !== 'reject') throw new UsageError(`--decision must be approve or reject, got "${decision}"`);
  if (!isUuid(id)) throw new CommandError(`reference ${id} not found`);
  const { db } = await database();
  const done = await reviewReference(db, id, decision, opts.reason);
  if (!done) throw new CommandError(`reference ${id} is not a ready public reference waiting for review`);
  return done;
}

async function socialConnect({ opts, config, database }: CommandContext) {
  const id = orgId(need(opts, 'org'));
  const platform = need(opts, 'platform');
  if (!isSocialPlatform(platform)) throw new UsageError(`--platform must be one of ${SOCIAL_PLATFORMS.join(', ')}, got "${platform}"`);
  const handle = need(opts, 'handle').replace(/^@/, '');
  if (handle.length > 200 || /[\u0000-\u001f\u007f]/.test(handle))
    throw new UsageError('--handle must be at most 200 characters without control characters');
  const accessToken = need(opts, 'access-token');
  const expiresIn = opts['expires-in'] !== undefined ? nonNegativeInt('expires-in', opts['expires-in'], 0) : undefined;
  const { db } = await database();
  await existingOrg(db, id);
  const cipher = tokenCipher(await loadTokenKey(config));
  const row = await connectAccount(db, cipher, {
    orgId: id,
    platform,
    handle,
    displayName: opts['display-name'] ?? null,
    accessToken,
    refreshToken: opts['refresh-token'] ?? null,
    expiresInSeconds: expiresIn,
    platformAccountId: opts['account-id'],
    scopes: opts.scopes?.split(/[ ,]+/).filter(Boolean) ?? [],
  });
  return describeAccount(row);
}

async function socialList({ opts, database }: CommandContext) {
  const id = orgId(need(opts, 'org'));
  const { db } = await database();
  await existingOrg(db, id);
  return { object: 'list', org: id, data: (await listAccounts(db, id)).map(describeAccount) };
}

async function socialDisconnect({ opts, database }: CommandContext) {
  const id = need(opts, 'id');
  if (!isUuid(id)) throw new CommandError(`social account ${id} not found`);
  const { db } = await database();
  const row = await disconnectAccount(db, id);
  if (!row) throw new CommandError(`social account ${id} not found`);
  return { object: 'social_account', id, platform: row.platform, handle: row.handle, disconnected: true };
}

/** The asset services' dependencies for an existing organization (opens the database and the storage). */
async function assetDeps({ config, database, storageOf }: CommandContext, org: string): Promise<AssetDeps> {
  const opened = await database();
  await existingOrg(opened.db, org);
  const storage = await storageOf(opened);
  return {
    db: opened.db,
    storage,
    dataDir: config.dataDir,
    limits: { maxPixels: config.mediaMaxPixels, maxDimension: config.mediaMaxDimension },
  };
}

/** --colors as role → colour pairs, or a usage error. */
function colorsOption(opts: Opts): Record<string, string> {
  const colors: Record<string, string> = {};
  for (const pair of (opts.colors ?? '').split(',').filter(Boolean)) {
    const [role, value] = pair.split('=').map((x) => x.trim());
    if (!value) throw new UsageError(`--colors takes role=#RRGGBB pairs (roles: ${COLOR_ROLES.join(', ')}), got "${pair}"`);
    colors[role] = value;
  }
  return colors;
}

async function brandKitCreate(ctx: CommandContext) {
  const { opts } = ctx;
  const org = orgId(need(opts, 'org'));
  const colors = colorsOption(opts);
  const body = checked('createBrandKit', {
    name: need(opts, 'name'),
    ...(opts.colors !== undefined ? { colors } : {}),
    ...(opts.fonts !== undefined ? { fonts: opts.fonts.split(',').map((f) => f.trim()) } : {}),
    ...(opts.logo !== undefined ? { logo: await fileBase64('logo', opts.logo, 5 * 1024 * 1024) } : {}),
  });
  return asCommand(createBrandKit(await assetDeps(ctx, org), org, body as never));
}

async function brandKitList(ctx: CommandContext) {
  const org = orgId(need(ctx.opts, 'org'));
  const deps = await assetDeps(ctx, org);
  return { object: 'list', org, data: (await listBrandKits(deps, org)).map((k) => brandKitView(deps.storage, k)) };
}

async function brandKitDelete(ctx: CommandContext) {
  const org = orgId(need(ctx.opts, 'org'));
  const id = need(ctx.opts, 'id');
  const deps = await assetDeps(ctx, org);
  if (!/^\d{1,15}$/.test(id) || Number(id) < 1) throw new CommandError(`brand kit ${id} not found`);
  return asCommand(deleteBrandKit(deps, org, Number(id)));
}

async function avatarCreate(ctx: CommandContext) {
  const { opts } = ctx;
  const org = orgId(need(opts, 'org'));
  const body = checked('createAvatar', {
    name: need(opts, 'name'),
    image: await fileBase64('image', need(opts, 'image'), 5 * 1024 * 1024),
  });
  return asCommand(createAvatar(await assetDeps(ctx, org), org, body as never));
}

async function avatarList(ctx: CommandContext) {
  const org = orgId(need(ctx.opts, 'org'));
  const deps = await assetDeps(ctx, org);
  return { object: 'list', org, data: (await listAvatars(deps, org)).map((a) => avatarView(deps.storage, a)) };
}

async function avatarDelete(ctx: CommandContext) {
  const org = orgId(need(ctx.opts, 'org'));
  const id = need(ctx.opts, 'id');
  return asCommand(deleteAvatar(await assetDeps(ctx, org), org, id));
}

async function voiceCreate(ctx: CommandContext) {
  const { opts } = ctx;
  const org = orgId(need(opts, 'org'));
  const body = checked('createVoice', {
    name: need(opts, 'name'),
    language: need(opts, 'language'),
    sample: await fileBase64('sample', need(opts, 'sample'), VOICE_SAMPLE_MAX_BYTES),
  });
  return asCommand(createVoice(await assetDeps(ctx, org), org, body as never));
}

async function voiceList(ctx: CommandContext) {
  const org = orgId(need(ctx.opts, 'org'));
  const deps = await assetDeps(ctx, org);
  return { object: 'list', org, data: (await listVoices(deps, org)).map((v) => customVoiceView(deps.storage, v)) };
}

async function voiceDelete(ctx: CommandContext) {
  const org = orgId(need(ctx.opts, 'org'));
  const id = need(ctx.opts, 'id');
  return asCommand(deleteVoice(await assetDeps(ctx, org), org, id));
}

/** Every command by its name (the USAGE text lists them in this order). */
const COMMANDS: Record<string, Command> = {
  'org create': orgCreate,
  'org set-plan': orgSetPlan,
  'credits grant': creditsGrant,
  'key create': keyCreate,
  'key revoke': keyRevoke,
  'member create': memberCreate,
  'grant list': grantList,
  'grant revoke': grantRevoke,
  'reference pending': referencePending,
  'reference review': referenceReview,
  'social connect': socialConnect,
  'social list': socialList,
  'social disconnect': socialDisconnect,
  'brand-kit create': brandKitCreate,
  'brand-kit list': brandKitList,
  'brand-kit delete': brandKitDelete,
  'avatar create': avatarCreate,
  'avatar list': avatarList,
  'avatar delete': avatarDelete,
  'voice create': voiceCreate,
  'voice list': voiceList,
  'voice delete': voiceDelete,
};

/** Where a command's output goes: the process's stdout and stderr, or strings in a test. */
export interface AdminOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * One admin command, as the process runs it: its JSON result written to `out.stdout`, or the error
 * (and the usage for a usage error) to `out.stderr`; resolves to the exit code (0, 1 failed, 2 usage).
 * The database and storage it opens are closed before it resolves.
 */
export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv, out: AdminOutput): Promise<number> {
  let config: Config | undefined;
  let opened: Database | undefined;
  const database = async () => {
    if (!opened) {
      if (!config!.databaseUrl) out.stderr(`admin: using the embedded PostgreSQL in ${config!.dataDir} …\n`);
      opened = await openDatabase({ databaseUrl: config!.databaseUrl, dataDir: config!.dataDir, poolSize: 2 });
    }
    return opened;
  };
  let storage: Storage | undefined;
  /** The storage the server uses (same backend, same URL signing key), for the asset commands. */
  const storageOf = async (d: Database) => {
    if (!storage) {
      const secret = config!.mediaSigningSecret ? Buffer.from(config!.mediaSigningSecret) : await sharedSecret(d.db, 'media_url_signing');
      storage = await createStorage(config!, secret);
      await storage.check();
    }
    return storage;
  };

  let code = 0;
  try {
    config = loadConfig(env);
    const result = await run(argv, config, database, storageOf);
    out.stdout(`${JSON.stringify(result)}\n`);
  } catch (err) {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    out.stderr(`admin: error: ${(err as Error).message}\n${usage ? `${USAGE}\n` : ''}`);
    code = usage ? 2 : 1;
  } finally {
    storage?.close();
    await opened?.close();
  }
  return code;
}

/** The CLI process: one command from argv, then exit with its code. */
export async function main(): Promise<never> {
  const life = handleSignals('admin');
  const finished = runAdmin(process.argv.slice(2), process.env, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
  // A signal waits for the command; without one, the process exits when it is done.
  life.onShutdown(() => finished);
  process.exit(await finished);
}
