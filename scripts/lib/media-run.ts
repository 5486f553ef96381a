// Runs the cases of the media matrix (./media-matrix.ts) against a running service: each case is
// created over HTTP as a customer would, polled until it finishes, its output downloaded into
// `outDir` (`<case name>.<ext>`) and the manifest its pipeline recorded read back (for the
// quality checker). caseRunner() works against any service (the quality tests give theirs);
// startRunner() starts one here first: a fresh embedded PostgreSQL in a temporary data folder, the
// API and the workers in this process, a paid workspace with enough credits. Used by
// `npm run gallery`, `npm run bench:quality` and test/quality/.
import fs from 'node:fs';
import { freePort } from '../../src/net/ports.ts';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/client.ts';
import type { MediaManifest } from '../../src/media/quality/manifest.ts';
import { type RecordedKind, recordedManifest } from '../../src/pipelines/recorded-manifest.ts';
import { startService, type Service } from '../../src/server.ts';
import { createApiKey } from '../../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../../src/services/workspaces/organizations.ts';
import type { MatrixCase } from './media-matrix.ts';

export interface CaseResult {
  case: MatrixCase;
  /** The downloaded output (absent when the case failed). */
  file?: string;
  /** What the renderer recorded it placed (texts, scenes, narration), for the quality checker. */
  manifest?: MediaManifest;
  /** Seconds from the request to completion (queueing included). */
  seconds: number;
  error?: string;
}

export interface MatrixRunner {
  run(c: MatrixCase): Promise<CaseResult>;
  stop(): Promise<void>;
}

export interface RunnerTarget {
  /** The service's base URL (http://host:port). */
  url: string;
  /** An API key with generations:read and generations:write, of a workspace with enough credits. */
  key: string;
  /** The service's database (for the recorded manifests). */
  db: Db;
  /** Where outputs are written. */
  outDir: string;
}

const POLL_MS = 250;
const CASE_DEADLINE_MS = 10 * 60_000;

/** Runs cases against `target`. */
export function caseRunner(target: RunnerTarget): MatrixRunner['run'] {
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${target.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${target.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(60_000),
    });
    const json = (await res.json()) as any;
    if (res.status >= 400) throw new Error(`${method} ${url}: ${res.status} ${json?.error?.code}: ${json?.error?.message}`);
    return json;
  };
  return async (c) => {
    const started = Date.now();
    try {
      const { poll, kind, id } = made(c, await call('POST', c.path, c.body));
      let body: any;
      for (;;) {
        body = await call('GET', poll);
        if (body.status === 'completed' || body.status === 'error' || body.status === 'failed') break;
        if (Date.now() - started > CASE_DEADLINE_MS) throw new Error(`${poll} still ${body.status}`);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      const seconds = (Date.now() - started) / 1000;
      if (body.status !== 'completed') throw new Error(`${poll}: ${body.status} ${JSON.stringify(body.error)}`);
      const url: string = body.video_url ?? body.url ?? body.output?.url;
      const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
      if (res.status !== 200) throw new Error(`download ${url}: ${res.status}`);
      const ext = c.pipeline === 'static_ad' ? (res.headers.get('content-type')?.split('/')[1] ?? 'png') : 'mp4';
      const file = path.join(target.outDir, `${c.name}.${ext}`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
      return { case: c, file, seconds, manifest: await recordedManifest(target.db, kind, id) };
    } catch (err) {
      return { case: c, seconds: (Date.now() - started) / 1000, error: (err as Error).message };
    }
  };
}

/** Where a created case is polled, and which kind of row its pipeline keeps its state in. */
function made(c: MatrixCase, created: any): { poll: string; kind: RecordedKind; id: string | number } {
  if (c.path === '/api/v1/generations') {
    const id = created.generations[0].id;
    return { poll: `/api/v1/generations/${id}`, kind: 'generation', id };
  }
  if (c.path === '/api/v1/slideshows') {
    const id = created.slideshow_id ?? created.id;
    return { poll: `/api/v1/slideshows/${id}`, kind: 'slideshow', id };
  }
  const id = created.video_id ?? created.id;
  return { poll: `/api/v1/videos/${id}`, kind: 'faceless_video', id };
}

/** Starts the service (embedded PostgreSQL, workers in process) and a workspace to run cases in. */
export async function startRunner(outDir: string, env: Record<string, string> = {}): Promise<MatrixRunner> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-matrix-'));
  // A known port, so signed media URLs (PUBLIC_BASE_URL) point at this very server.
  const port = await freePort();
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: '',
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'silent',
    DEMO_WORKSPACE: '0',
    RATE_LIMIT_GENERATIONS: '100000',
    ...env,
  });
  let service: Service;
  try {
    service = await startService({ config, workers: true });
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const org = await createOrganization(service.ctx.db, { name: 'Media matrix', plan: 'paid', credits: 10_000_000 });
  const { key } = await createApiKey(service.ctx.db, { orgId: org.id, scopes: ['generations:read', 'generations:write'] });
  return {
    run: caseRunner({ url: service.address!, key, db: service.ctx.db, outDir }),
    async stop() {
      await service.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `cases` `parallel` at a time, reporting each as it finishes; results in the order of `cases`. */
export async function runAll(
  run: MatrixRunner['run'],
  cases: MatrixCase[],
  parallel: number,
  onDone: (r: CaseResult, done: number, total: number) => void | Promise<void>,
): Promise<CaseResult[]> {
  const results = new Map<MatrixCase, CaseResult>();
  let next = 0;
  const lane = async () => {
    while (next < cases.length) {
      const c = cases[next++];
      const r = await run(c);
      results.set(c, r);
      await onDone(r, results.size, cases.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, lane));
  return cases.map((c) => results.get(c)!);
}
