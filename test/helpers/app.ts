// Starts the real service (Fastify + PostgreSQL) on a fresh database for one test file, and
// a request helper that checks every response against the contract.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { freePort } from '../../src/net/ports.ts';
import { loadConfig } from '../../src/config.ts';
import type { Service } from '../../src/server.ts';
import { startService } from '../../src/server.ts';
import { createApiKey } from '../../src/services/workspaces/api-keys.ts';
import { createOrganization, type Plan } from '../../src/services/workspaces/organizations.ts';
import { checkResponse } from './contract.ts';
import { createTestDatabase } from './db.ts';
import type { TestS3 } from './s3.ts';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
  operationId: string | undefined;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as is (a string or bytes), with `contentType`. */
  raw?: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  /** Skip the contract check (only for deliberately non-contract requests). */
  unchecked?: boolean;
}

export interface TestApp {
  url: string;
  /** The S3 server storage uses (STORAGE=s3 from TEST_STORAGE=s3), else undefined. */
  s3: TestS3 | undefined;
  service: Service;
  databaseUrl: string;
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse<T>>;
  workspace(opts?: {
    plan?: Plan;
    credits?: number;
    scopes?: string[];
    name?: string;
  }): Promise<{ orgId: string; key: string; keyId: string }>;
}

export { freePort };

export interface TestAppOptions {
  /** Run the job workers in the same process (default: off). */
  workers?: boolean;
  /** Share the database of another test app (several API nodes on one PostgreSQL). */
  databaseUrl?: string;
}

const s3ByDatabase = new Map<string, Promise<TestS3>>();

export async function startTestApp(t: Test, env: Record<string, string> = {}, opts: TestAppOptions = {}): Promise<TestApp> {
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase(t));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-data-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  // A known port, so PUBLIC_BASE_URL (signed media URLs) points at this very server.
  const port = await freePort();
  // TEST_STORAGE=s3 runs a test file's apps on S3 storage, unless it sets STORAGE itself: an s3rver
  // per database, so apps sharing a database (several nodes) share a bucket, as in production.
  // Processes a test spawns get it from `app.s3.env`.
  let s3: TestS3 | undefined;
  if (process.env.TEST_STORAGE === 's3' && env.STORAGE === undefined) {
    let started = s3ByDatabase.get(databaseUrl);
    // Loaded only here: s3rver and the AWS SDK are some 300 modules other test files need not load.
    if (!started) s3ByDatabase.set(databaseUrl, (started = import('./s3.ts').then(({ startS3 }) => startS3(t))));
    s3 = await started;
  }
  const config = loadConfig({
    ...s3?.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DEMO_WORKSPACE: '0',
    DATA_DIR: dataDir,
    MEDIA_SIGNING_SECRET: 'test-media-signing-secret',
    JOB_HEARTBEAT_SECONDS: '10',
    ...env,
  });
  const service = await startService({ config, workers: opts.workers ?? false });
  t.teardown(() => service.stop());
  const url = service.address!;

  const request = async (method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse> => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
    let body: string | Uint8Array | undefined;
    if (opts.raw !== undefined) {
      body = opts.raw;
      if (opts.contentType) headers['content-type'] = opts.contentType;
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
    }
    const res = await fetch(`${url}${path}`, { method, headers, body });
    const text = await res.text();
    const ct = res.headers.get('content-type');
    let parsed: unknown = text;
    if (ct?.includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        t.fail(`${method} ${path}: response claims JSON but does not parse: ${text.slice(0, 200)}`);
      }
    }
    let operationId: string | undefined;
    if (!opts.unchecked) {
      const check = checkResponse(method, path, res.status, ct, parsed, Object.fromEntries(res.headers));
      operationId = check.operationId;
      for (const p of check.problems) t.fail(`contract: ${p}`);
    }
    return { status: res.status, headers: res.headers, body: parsed, text, operationId };
  };

  const workspace: TestApp['workspace'] = async (opts = {}) => {
    const org = await createOrganization(service.ctx.db, {
      name: opts.name ?? 'Test workspace',
      plan: opts.plan ?? 'paid',
      credits: opts.credits ?? 0,
    });
    const key = await createApiKey(service.ctx.db, {
      orgId: org.id,
      scopes: opts.scopes ?? ['generations:read', 'generations:write'],
    });
    return { orgId: org.id, key: key.key, keyId: key.id };
  };

  return { url, s3, service, databaseUrl, request, workspace };
}
