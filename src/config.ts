// All configuration comes from environment variables, read here and only here.
// Every variable is documented in the README's configuration table.
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  publicBaseUrl: string;
  apiOnly: boolean;
  bodyLimitBytes: number;
  logLevel: string;
  demoWorkspace: boolean;
  /** HMAC secret of signed media URLs; unset: one generated and kept in the database (shared by every node). */
  mediaSigningSecret: string | undefined;
  mediaUrlTtlSeconds: number;
  rateLimitGenerations: number;
  rateLimitWindowSeconds: number;
  /** Attempts of a generation job after the first, for retryable provider failures. */
  generationRetryLimit: number;
  /** Generation jobs a worker process runs at once. */
  workerConcurrency: number;
  /** pg-boss heartbeat: a job whose worker stops heartbeating for this long is retried elsewhere. */
  jobHeartbeatSeconds: number;
  provider: ProviderConfig;
  /**
   * host:port pairs the guarded outbound client may reach although they are private or
   * loopback. Empty in production; tests use it for local fixture servers.
   */
  outboundAllowHosts: string[];
}

export interface ProviderConfig {
  kind: 'local' | 'remote';
  remoteUrl: string | undefined;
  remoteApiKey: string | undefined;
  remotePollMs: number;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`Environment variable ${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error(`Environment variable ${name} must be a boolean (1/0, true/false), got "${raw}"`);
}

function providerConfig(env: NodeJS.ProcessEnv): ProviderConfig {
  const kind = env.GENERATION_PROVIDER || 'local';
  if (kind !== 'local' && kind !== 'remote') throw new Error(`GENERATION_PROVIDER must be local or remote, got "${kind}"`);
  const remoteUrl = env.REMOTE_PROVIDER_URL || undefined;
  if (kind === 'remote' && !remoteUrl) throw new Error('GENERATION_PROVIDER=remote needs REMOTE_PROVIDER_URL');
  return { kind, remoteUrl, remoteApiKey: env.REMOTE_PROVIDER_API_KEY || undefined, remotePollMs: int(env, 'REMOTE_PROVIDER_POLL_MS', 1000, 10, 60_000) };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const publicBaseUrl = (env.PUBLIC_BASE_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicBaseUrl);
  } catch {
    throw new Error(`Environment variable PUBLIC_BASE_URL must be an absolute URL, got "${publicBaseUrl}"`);
  }
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    publicBaseUrl,
    apiOnly: bool(env, 'API_ONLY', false),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 16 * 1024 * 1024, 1024),
    logLevel: env.LOG_LEVEL || 'info',
    demoWorkspace: bool(env, 'DEMO_WORKSPACE', true),
    mediaSigningSecret: env.MEDIA_SIGNING_SECRET || undefined,
    mediaUrlTtlSeconds: int(env, 'MEDIA_URL_TTL_SECONDS', 3600, 1, 7 * 24 * 3600),
    rateLimitGenerations: int(env, 'RATE_LIMIT_GENERATIONS', 60, 1),
    rateLimitWindowSeconds: int(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1, 24 * 3600),
    generationRetryLimit: int(env, 'GENERATION_RETRY_LIMIT', 2, 0, 10),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 1, 1, 32),
    jobHeartbeatSeconds: int(env, 'JOB_HEARTBEAT_SECONDS', 30, 10, 3600),
    provider: providerConfig(env),
    outboundAllowHosts: (env.OUTBOUND_ALLOW_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean),
  };
}
