// The admin CLI. Each command prints one JSON object on stdout and exits 0, or prints an
// error on stderr and exits non-zero (1: failed, 2: usage). It uses DATABASE_URL/DATA_DIR
// like the server, and attaches to the embedded database when the server is running.
// SIGTERM/SIGINT do not cut a command short (each is one short transaction): it finishes, the
// database is closed (the embedded PostgreSQL stopped if this process started it) and the exit
// code is the command's. A second signal exits at once.
import { parseArgs } from 'node:util';
import { handleSignals } from '../lifecycle.ts';
import { loadConfig } from '../config.ts';
import { openDatabase, type Database } from '../db/client.ts';
import { createApiKey, revokeApiKey, validateScopes } from '../services/workspaces/api-keys.ts';
import { checkEmail, checkPassword, createMember, MemberError } from '../services/oauth/members.ts';
import { listGrants, revokeGrantById } from '../services/oauth/oauth.ts';
import { pendingReviews, reviewReference } from '../services/references/references.ts';
import { connectAccount, describeAccount, disconnectAccount, isSocialPlatform, listAccounts, SOCIAL_PLATFORMS } from '../services/social/accounts.ts';
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
  social connect --org ID --platform instagram|facebook|tiktok|x|linkedin|threads|youtube|pinterest
                 --handle NAME --access-token TOKEN [--refresh-token TOKEN] [--expires-in SECONDS]
                 [--account-id PLATFORM_ACCOUNT_ID] [--display-name NAME] [--scopes a,b]
  social list --org ID       the workspace's connected social accounts (never their tokens)
  social disconnect --id ID  forget a connection and its tokens`;

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

async function run(argv: string[], database: () => Promise<Database>): Promise<unknown> {
  const [group, action, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
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
    },
    strict: true,
    allowPositionals: false,
  });
  const opts = values as Opts;
  const command = `${group ?? ''} ${action ?? ''}`.trim();
  switch (command) {
    case 'org create': {
      const name = need(opts, 'name');
      const credits = opts.credits !== undefined ? nonNegativeInt('credits', opts.credits) : 0;
      const p = opts.plan !== undefined ? plan(opts.plan) : 'paid';
      const { db } = await database();
      return createOrganization(db, { name, credits, plan: p });
    }
    case 'org set-plan': {
      const id = orgId(need(opts, 'org'));
      const p = plan(need(opts, 'plan'));
      const { db } = await database();
      const org = await setPlan(db, id, p);
      if (!org) throw new CommandError(`organization ${id} not found`);
      return org;
    }
    case 'credits grant': {
      const id = orgId(need(opts, 'org'));
      const amount = nonNegativeInt('amount', need(opts, 'amount'), 1);
      const { db } = await database();
      const credits = await grantCredits(db, id, amount);
      if (credits === undefined) throw new CommandError(`organization ${id} not found`);
      return { object: 'credit_balance', org: id, credits };
    }
    case 'key create': {
      const id = orgId(need(opts, 'org'));
      let scopes: string[];
      try {
        scopes = validateScopes(need(opts, 'scopes').split(',').map((s) => s.trim()).filter(Boolean));
      } catch (err) {
        throw new UsageError(`--scopes: ${(err as Error).message}`);
      }
      const expiresIn = opts['expires-in'] !== undefined ? nonNegativeInt('expires-in', opts['expires-in'], 1) : undefined;
      const { db } = await database();
      if (!(await getOrganization(db, id))) throw new CommandError(`organization ${id} not found`);
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
    case 'key revoke': {
      const id = need(opts, 'id');
      if (!isUuid(id)) throw new CommandError(`api key ${id} not found`);
      const { db } = await database();
      if (!(await revokeApiKey(db, id))) throw new CommandError(`api key ${id} not found`);
      return { object: 'api_key', id, revoked: true };
    }
    case 'member create': {
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
    case 'grant list': {
      const id = orgId(need(opts, 'org'));
      const { db } = await database();
      if (!(await getOrganization(db, id))) throw new CommandError(`organization ${id} not found`);
      return { object: 'list', org: id, data: await listGrants(db, { orgId: id }) };
    }
    case 'grant revoke': {
      const id = need(opts, 'id');
      const { db } = await database();
      if (!(await revokeGrantById(db, id))) throw new CommandError(`grant ${id} not found`);
      return { object: 'oauth_grant', id, revoked: true };
    }
    case 'reference pending': {
      const { db } = await database();
      return { object: 'list', data: await pendingReviews(db) };
    }
    case 'reference review': {
      const id = need(opts, 'id');
      const decision = need(opts, 'decision');
      if (decision !== 'approve' && decision !== 'reject') throw new UsageError(`--decision must be approve or reject, got "${decision}"`);
      if (!isUuid(id)) throw new CommandError(`reference ${id} not found`);
      const { db } = await database();
      const done = await reviewReference(db, id, decision, opts.reason);
      if (!done) throw new CommandError(`reference ${id} is not a ready public reference waiting for review`);
      return done;
    }
    case 'social connect': {
      const id = orgId(need(opts, 'org'));
      const platform = need(opts, 'platform');
      if (!isSocialPlatform(platform)) throw new UsageError(`--platform must be one of ${SOCIAL_PLATFORMS.join(', ')}, got "${platform}"`);
      const handle = need(opts, 'handle').replace(/^@/, '');
      if (handle.length > 200 || /[\u0000-\u001f\u007f]/.test(handle)) throw new UsageError('--handle must be at most 200 characters without control characters');
      const accessToken = need(opts, 'access-token');
      const expiresIn = opts['expires-in'] !== undefined ? nonNegativeInt('expires-in', opts['expires-in'], 0) : undefined;
      const { db } = await database();
      if (!(await getOrganization(db, id))) throw new CommandError(`organization ${id} not found`);
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
    case 'social list': {
      const id = orgId(need(opts, 'org'));
      const { db } = await database();
      if (!(await getOrganization(db, id))) throw new CommandError(`organization ${id} not found`);
      return { object: 'list', org: id, data: (await listAccounts(db, id)).map(describeAccount) };
    }
    case 'social disconnect': {
      const id = need(opts, 'id');
      if (!isUuid(id)) throw new CommandError(`social account ${id} not found`);
      const { db } = await database();
      const row = await disconnectAccount(db, id);
      if (!row) throw new CommandError(`social account ${id} not found`);
      return { object: 'social_account', id, platform: row.platform, handle: row.handle, disconnected: true };
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

const life = handleSignals('admin');
const config = loadConfig();
let opened: Database | undefined;
const database = async () => {
  if (!opened) {
    if (!config.databaseUrl) process.stderr.write(`admin: using the embedded PostgreSQL in ${config.dataDir} …\n`);
    opened = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  }
  return opened;
};

const finished = (async () => {
  let code = 0;
  try {
    const result = await run(process.argv.slice(2), database);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (err) {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`admin: error: ${(err as Error).message}\n${usage ? `${USAGE}\n` : ''}`);
    code = usage ? 2 : 1;
  } finally {
    await opened?.close();
  }
  return code;
})();
// A signal waits for the command; without one, the process exits when it is done.
life.onShutdown(() => finished);
process.exit(await finished);
