// Runs the cases of the media matrix (./media-matrix.ts) against a service started here: a fresh
// embedded PostgreSQL in a temporary data folder, the API and the workers in this process, a paid
// workspace with enough credits. Each case is created over HTTP as a customer would, polled until
// it finishes, and its output downloaded into `outDir` (`<case name>.<ext>`). Used by
// `npm run gallery` and `npm run bench:quality`; prints progress as it goes.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startService, type Service } from '../../src/server.ts';
import { createApiKey } from '../../src/services/workspaces/api-keys.ts';
import { createOrganization } from '../../src/services/workspaces/organizations.ts';
import type { MediaManifest } from '../../src/media/quality/manifest.ts';
import { type RecordedKind, recordedManifest } from '../../src/pipelines/recorded-manifest.ts';
import type { MatrixCase } from './media-matrix.ts';

export interface CaseResult {
  case: MatrixCase;
  /** What the renderer recorded it placed (texts, scenes, narration), for the quality checker. */
  manifest?: MediaManifest;
  /** The downloaded output (absent when the case failed). */
  file?: string;
  /** Seconds from the request to completion (queueing included). */
  seconds: number;
  error?: string;
}

export interface MatrixRunner {
  run(c: MatrixCase): Promise<CaseResult>;
  stop(): Promise<void>;
}

const POLL_MS = 250;

/** A TCP port nothing listens on right now (127.0.0.1). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
const CASE_DEADLINE_MS = 10 * 60_000;

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
  const base = service.address!;
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(60_000),
    });
    const json = (await res.json()) as any;
    if (res.status >= 400) throw new Error(`${method} ${url}: ${res.status} ${json?.error?.code}: ${json?.error?.message}`);
    return json;
  };
  return {
    async run(c) {
      const started = Date.now();
      try {
        const created = await call('POST', c.path, c.body);
        const { poll, kind, id } = made(c, created);
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
        const file = await save(c, ext, Buffer.from(await res.arrayBuffer()));
        return { case: c, file, seconds, manifest: await recordedManifest(service.ctx.db, kind, id) };
      } catch (err) {
        return { case: c, seconds: (Date.now() - started) / 1000, error: (err as Error).message };
      }
    },
    async stop() {
      await service.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };

  async function save(c: MatrixCase, ext: string, bytes: Buffer): Promise<string> {
    const file = path.join(outDir, `${c.name}.${ext}`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, bytes);
    return file;
  }
}

/** Where a created case is polled, and the row its pipeline keeps its state in. */
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

/** Runs `cases` `parallel` at a time, reporting each as it finishes. */
export async function runAll(
  runner: MatrixRunner,
  cases: MatrixCase[],
  parallel: number,
  onDone: (r: CaseResult, done: number, total: number) => void | Promise<void>,
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < cases.length) {
      const c = cases[next++];
      const r = await runner.run(c);
      results.push(r);
      await onDone(r, ++done, cases.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, lane));
  return cases.map((c) => results.find((r) => r.case === c)!);
}
