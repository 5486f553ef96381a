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
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { probe } from '../../src/media/ffmpeg.ts';
import { startMcpApp } from './helpers.ts';

const run = promisify(execFile);
const here = path.dirname(new URL(import.meta.url).pathname);
/** The Python SDK's version the test installs. */
const MCP_PY_VERSION = '2.3.0';

type Obj = Record<string, any>;

const app = await startMcpApp(t, { RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const ws = await app.workspace({ credits: 500 });

/** A client script of ./clients as a process (`command` runs it), its one JSON line. */
async function client(command: string, script: string, mode: 'run' | 'cancel'): Promise<Obj> {
  const args = [path.join(here, 'clients', script), `${app.url}/mcp`, ws.key, mode];
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

// Installed while the TypeScript client runs.
const python = pythonWithMcp();

t.test('2026-07-28: the SDK v2 client with ext-tasks runs a faceless video as a task to the finished MP4', async (t) => {
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
  const out = await client(py.python, 'py_tasks_client.py', 'run');
  t.equal(out.protocolVersion, '2025-11-25');
  t.match(out.serverTasks, { requests: { tools: { call: {} } }, cancel: {} }, 'the server declares core tasks');
  t.match(out.created, { status: 'working', taskId: /^[0-9a-f-]{36}$/ }, 'a task, not a plain result');
  t.same(out.statuses, ['working', 'completed'], 'working, then completed');
  t.match(out.result._meta, { 'io.modelcontextprotocol/related-task': { taskId: out.created.taskId } });
  await checkFinishedVideo(t, out.result);
});
