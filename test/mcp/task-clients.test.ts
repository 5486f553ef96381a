// MCP tasks through real clients, as processes, on one service: brief → task → finished faceless
// video with a resource link.
//   - 2026-07-28: the official TypeScript SDK v2 client with the tasks extension's requester
//     (@modelcontextprotocol/ext-tasks), followed with the package's own settle() (./clients/v2-tasks-client.ts);
//   - 2025-11-25: the official Python SDK (`mcp`, installed with pip into a virtual environment in a
//     temporary folder), core tasks sent with ClientSession.send_request (./clients/py_tasks_client.py).
//     Without python3 (3.10 or later), its venv module or the package, those tests are skipped,
//     saying why.
// Each creates one 5-second faceless video as a task; the test checks the task was created (not a
// plain result), went from working to completed, and ended with the finished video as
// structuredContent and a resource_link whose URI downloads an MP4.
// Before that, while the service runs no workers (they join it afterwards), each client cancels a
// queued faceless video's task: 2025-11-25 answers with the cancelled task, 2026-07-28 acknowledges
// and tasks/get then says cancelled; the workspace's balance is back where it was, with one refund
// row in its ledger.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { asc, eq } from 'drizzle-orm';
import t, { type Test } from 'tap';
import { creditLedger, organizations } from '../../src/db/schema/index.ts';
import { startWorkers } from '../../src/jobs/boss.ts';
import { probe } from '../../src/media/ffmpeg.ts';
import { JOBS } from '../../src/pipelines/index.ts';
import { startMcpApp } from './helpers.ts';

const run = promisify(execFile);
const here = path.dirname(new URL(import.meta.url).pathname);
/** The Python SDK's version the test installs. */
const MCP_PY_VERSION = '2.3.0';

type Obj = Record<string, any>;

// No workers yet: the cancel tests need their jobs to stay queued. The workers join this same
// service before the first video is to be made (workersJoin).
const app = await startMcpApp(t, { RATE_LIMIT_GENERATIONS: '1000' }, { workers: false });
const ws = await app.workspace({ credits: 500 });
let joined: Promise<unknown> | undefined;
const workersJoin = () => (joined ??= startWorkers(app.service.boss!, app.service.ctx, JOBS));

/** A client script of ./clients as a process (`command` runs it), its one JSON line. */
async function client(command: string, script: string, mode: 'run' | 'cancel', key = ws.key): Promise<Obj> {
  const args = [path.join(here, 'clients', script), `${app.url}/mcp`, key, mode];
  const { stdout } = await run(command, args, { timeout: 240_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

/**
 * A Python with the official SDK: python3 (3.10 or later) makes a virtual environment in a
 * temporary folder (removed in teardown) and pip installs `mcp` there, leaving nothing in pip's
 * cache either. Resolves with the venv's python, or the reason it cannot be had. pip tries each
 * index once more at most (`--retries 1`): where an index cannot be reached at all, pip's default
 * of five retries with back-off made one install take 3 min 40 s instead of about 13 s, so the
 * venv is not cached between runs.
 */
async function pythonWithMcp(): Promise<{ python: string } | { skip: string }> {
  const why = (err: unknown) =>
    String((err as { stderr?: string }).stderr || (err as Error).message)
      .trim()
      .split('\n')
      .slice(-3)
      .join(' ');
  try {
    await run('python3', ['-c', 'import sys; assert sys.version_info >= (3, 10), sys.version']);
  } catch (err) {
    return { skip: `python3 3.10 or later is not available: ${why(err)}` };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-python-client-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  try {
    await run('python3', ['-m', 'venv', dir], { timeout: 120_000 });
  } catch (err) {
    return { skip: `python3 cannot make a virtual environment: ${why(err)}` };
  }
  const started = Date.now();
  try {
    await run(path.join(dir, 'bin', 'pip'), ['install', '--quiet', '--no-cache-dir', '--retries', '1', `mcp==${MCP_PY_VERSION}`], {
      timeout: 300_000,
    });
  } catch (err) {
    return { skip: `pip could not install mcp==${MCP_PY_VERSION}: ${why(err)}` };
  }
  t.comment(`pip installed mcp==${MCP_PY_VERSION} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { python: path.join(dir, 'bin', 'python') };
}

/** The finished video of a final tool result: its structured content and its MP4, downloaded and probed. */
async function checkFinishedVideo(t: Test, result: Obj) {
  t.notOk(result.isError, JSON.stringify(result).slice(0, 400));
  t.match(result.structuredContent, { object: 'faceless_video_generation', status: /^(completed|ready)$/ });
  const video = result.structuredContent.video;
  t.match(video, { status: /^(completed|ready)$/, url: /^http/ }, 'the finished video');
  const link = result.content.find((c: Obj) => c.type === 'resource_link');
  t.match(link, { uri: video.url, mimeType: 'video/mp4' }, 'the video as a resource link');
  const res = await fetch(link.uri);
  t.equal(res.status, 200, 'the resource link downloads');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'task-clients-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'video.mp4');
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  const p = await probe({ path: file, type: 'video/mp4' });
  t.match(p, { format: /mp4/, has_video: true, has_audio: true, video_codec: 'h264' }, 'an MP4');
  t.ok(Math.abs(p.duration_seconds! - 5) <= 0.5, `lasts ${p.duration_seconds} s`);
}

/** The workspace's balance is back to 500, its ledger one charge and one refund of it. */
async function checkRefunded(t: Test, orgId: string) {
  const db = app.service.ctx.db;
  const [org] = await db.select({ credits: organizations.credits }).from(organizations).where(eq(organizations.id, orgId));
  t.equal(org.credits, 500, 'the balance is back to what it was');
  const rows = await db.select().from(creditLedger).where(eq(creditLedger.orgId, orgId)).orderBy(asc(creditLedger.id));
  const charges = rows.filter((r) => r.delta < 0);
  const refunds = rows.filter((r) => r.reason.endsWith('_refund'));
  t.equal(charges.length, 1, 'charged once');
  t.equal(refunds.length, 1, 'one refund row');
  t.equal(refunds[0]?.delta, -charges[0]?.delta, 'the refund is the charge, in full');
}

// Installed while the TypeScript clients run.
const python = pythonWithMcp();

t.test('2026-07-28: the SDK v2 client with ext-tasks cancels a queued task; refunded in full', async (t) => {
  const cw = await app.workspace({ credits: 500 });
  const out = await client(process.execPath, 'v2-tasks-client.ts', 'cancel', cw.key);
  t.equal(out.kind, 'task', 'a task, not a plain result');
  t.match(out.cancelAck, { result: { resultType: 'complete' } }, 'tasks/cancel acknowledged');
  t.notOk(out.cancelAck?.error, 'not refused');
  t.equal(out.outcome, 'cancelled', 'the package ends the execution as cancelled on the acknowledgement');
  t.match(out.after, { taskId: out.taskId, status: 'cancelled' }, 'tasks/get then says cancelled');
  t.match(out.methods, ['tools/call', 'tasks/cancel', 'tasks/get']);
  await checkRefunded(t, cw.orgId);
});

t.test('2025-11-25: the Python SDK cancels a queued task; refunded in full', async (t) => {
  const py = await python;
  if ('skip' in py) return t.plan(0, py.skip);
  const cw = await app.workspace({ credits: 500 });
  const out = await client(py.python, 'py_tasks_client.py', 'cancel', cw.key);
  t.match(out.created, { status: 'working', taskId: /^[0-9a-f-]{36}$/ }, 'a task, not a plain result');
  t.notOk(out.cancelError, `tasks/cancel not refused: ${JSON.stringify(out.cancelError)}`);
  t.match(out.cancelled, { taskId: out.created.taskId, status: 'cancelled' }, 'tasks/cancel answers the cancelled task');
  t.match(out.after, { taskId: out.created.taskId, status: 'cancelled' }, 'tasks/get says cancelled');
  await checkRefunded(t, cw.orgId);
});

t.test('2026-07-28: the SDK v2 client with ext-tasks runs a faceless video as a task to the finished MP4', async (t) => {
  await workersJoin();
  const out = await client(process.execPath, 'v2-tasks-client.ts', 'run');
  t.equal(out.kind, 'task', 'a task, not a plain result');
  t.match(out.taskId, /^[0-9a-f-]{36}$/);
  t.same(out.statuses, ['working', 'completed'], 'working, then completed');
  t.equal(out.outcome, 'completed');
  await checkFinishedVideo(t, out.result);
});

t.test('2025-11-25: the Python SDK runs a faceless video as a task (tasks/get, tasks/result) to the finished MP4', async (t) => {
  const py = await python;
  if ('skip' in py) return t.plan(0, py.skip);
  await workersJoin();
  const out = await client(py.python, 'py_tasks_client.py', 'run');
  t.equal(out.protocolVersion, '2025-11-25');
  t.match(out.serverTasks, { requests: { tools: { call: {} } }, cancel: {} }, 'the server declares core tasks');
  t.match(out.created, { status: 'working', taskId: /^[0-9a-f-]{36}$/ }, 'a task, not a plain result');
  t.same(out.statuses, ['working', 'completed'], 'working, then completed');
  t.match(out.result._meta, { 'io.modelcontextprotocol/related-task': { taskId: out.created.taskId } });
  await checkFinishedVideo(t, out.result);
});
