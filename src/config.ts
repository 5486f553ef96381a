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
  };
}
