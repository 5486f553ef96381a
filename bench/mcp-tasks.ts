// Benchmark: MCP tasks against what a REST client does for the same work, on one service (API and
// workers), same run, same machine.
//   1. tasks/get (revision 2026-07-28, the tasks extension) of a finished generation's task against
//      REST GET /api/v1/generations/{id} of the same record: rounds alternate, the median ratio of
//      req/s is reported (goal ≥ 0.5×). tasks/get reads the record through the same read path and
//      answers it as the final tool result (structured content and resource links).
//   2. The delay of progress notifications: a faceless video created by a 2025-11-25 call without a
//      task but with a progress token (src/mcp/progress.ts) while a REST client polls the video every
//      20 ms; for each stage the worker enters, the delay from the poller's first sight of it to the
//      first notification naming it (goal ≤ 1 s). The poller sees a change up to one poll late, so the
//      figure is up to ~20–30 ms short of the true delay.
// Usage: node bench/mcp-tasks.ts [--duration S] [--rounds N] [--connections C]
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { load, median, startService } from './lib/servers.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
  },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const say = (s: string) => process.stdout.write(`${s}\n`);
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
type Obj = Record<string, any>;

say('mcp tasks bench: starting the service (API and workers) …');
const dataDir = process.env.DATABASE_URL ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-bench-tasks-'));
const env: Record<string, string> = dataDir ? { DATA_DIR: dataDir } : {};
const service = await startService({ ...env, API_ONLY: '0', RATE_LIMIT_GENERATIONS: '100000' });
const admin = async (...args: string[]) =>
  JSON.parse((await run(process.execPath, ['src/cli/admin.ts', ...args], { cwd: root, env: { ...process.env, ...env } })).stdout);

const MODERN = '2026-07-28';
const envelope = (tasks: boolean) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {},
});

try {
  const org = await admin('org', 'create', '--name', 'Bench tasks', '--plan', 'paid', '--credits', '10000');
  const { key } = await admin('key', 'create', '--org', org.id, '--scopes', 'generations:read,generations:write');
  const auth = { authorization: `Bearer ${key}` };
  const headers = (method: string, name?: string) => ({
    ...auth,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(name ? { 'mcp-name': name } : {}),
  });
  const rpc = async (method: string, params: Obj, name?: string, tasks = true) => {
    const res = await fetch(`${service.url}/mcp`, {
      method: 'POST',
      headers: headers(method, name),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope(tasks) } }),
    });
    const body = (await res.json()) as { result?: Obj; error?: Obj };
    if (!body.result) throw new Error(`${method}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    return body.result;
  };

  // ---------------------------------------------------------------- 1. tasks/get against REST GET
  const created = await rpc(
    'tools/call',
    { name: 'create_generation', arguments: { type: 'static_ad', template_slug: 'product-spotlight', prompt: 'Cold-pressed olive oil' } },
    'create_generation',
  );
  if (created.resultType !== 'task') throw new Error(`no task: ${JSON.stringify(created).slice(0, 300)}`);
  let task: Obj = created;
  for (let i = 0; i < 600 && task.status === 'working'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    task = await rpc('tasks/get', { taskId: created.taskId }, created.taskId);
  }
  if (task.status !== 'completed') throw new Error(`the task did not complete: ${JSON.stringify(task).slice(0, 300)}`);
  const generationId = task.result.structuredContent.generations[0].id as string;
  const restUrl = `${service.url}/api/v1/generations/${generationId}`;
  const restView = (await (await fetch(restUrl, { headers: auth })).json()) as Obj;
  if (JSON.stringify(restView) !== JSON.stringify(task.result.structuredContent.generations[0]))
    say('  (note: the REST view and the task result differ only by their signed URLs, which are made per read)');
  const get = {
    method: 'POST',
    headers: headers('tasks/get', created.taskId),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: created.taskId, _meta: envelope(true) } }),
  };
  say(`mcp tasks bench: ${rounds} rounds × ${duration}s per side, ${connections} connections`);
  await load(restUrl, { duration: 2, connections, headers: auth });
  await load(`${service.url}/mcp`, { duration: 2, connections, ...get });
  const ratios: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const r = await load(restUrl, { duration, connections, headers: auth });
    const m = await load(`${service.url}/mcp`, { duration, connections, ...get });
    if (m.non2xx || m.errors || r.non2xx || r.errors)
      throw new Error(`non-2xx or errors: REST ${r.non2xx}/${r.errors}, MCP ${m.non2xx}/${m.errors}`);
    ratios.push(m.rps / r.rps);
    say(
      `  round ${i + 1}: REST GET /generations/{id} ${r.rps.toFixed(0)} req/s (p99 ${r.p99} ms) | MCP tasks/get ${m.rps.toFixed(0)} req/s (p99 ${m.p99} ms) | ratio ${(m.rps / r.rps).toFixed(3)}`,
    );
  }
  const ratio = median(ratios);
  say(`mcp tasks bench: tasks/get / REST GET RATIO ${ratio.toFixed(3)} (goal ≥ 0.5) ${ratio >= 0.5 ? 'MET' : 'NOT MET'}`);

  // ---------------------------------------------------------------- 2. progress notification delay
  const delays: number[] = [];
  let stagesSeen = 0;
  for (let attempt = 0; attempt < 3; attempt++) delays.push(...(await progressDelays(attempt)));
  if (delays.length === 0) throw new Error('no stage change was seen');
  const worst = Math.max(...delays);
  say(
    `mcp tasks bench: progress notification after a stage change: median ${median(delays).toFixed(0)} ms, max ${worst.toFixed(0)} ms over the ${delays.length} of ${stagesSeen} stage changes named by a notification (a stage shorter than the server's read interval (500 ms) is named by none: the next one's notification follows) (goal ≤ 1000 ms) ${worst <= 1000 ? 'MET' : 'NOT MET'}`,
  );

  /** One faceless video followed by progress notifications and a REST poller; the delays of its stage changes. */
  async function progressDelays(n: number): Promise<number[]> {
    const started = performance.now();
    const res = await fetch(`${service.url}/mcp`, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'create_faceless_video',
          arguments: {
            script: 'Cold brew is smooth. Make it tonight and drink it tomorrow.',
            duration: '5',
            voice_id: 'marcus-narrator',
            idempotency_key: `bench-progress-${n}-${Date.now()}`,
          },
          _meta: { progressToken: `p${n}` },
        },
      }),
    });
    const notified = new Map<string, number>();
    const seen = new Map<string, number>();
    let poller: Promise<void> | undefined;
    let done = false;
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const data = buffer
          .slice(0, end)
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5))
          .join('');
        buffer = buffer.slice(end + 2);
        if (!data) continue;
        const msg = JSON.parse(data) as Obj;
        if (msg.method !== 'notifications/progress') continue;
        const text = String(msg.params.message);
        const stage = /stage ([a-z_-]+)/.exec(text)?.[1];
        if (stage && !notified.has(stage)) notified.set(stage, performance.now());
        const id = /video (\d+)/.exec(text)?.[1];
        if (id && !poller) poller = poll(Number(id));
      }
    }
    done = true;
    await poller;
    stagesSeen += seen.size;
    const out: number[] = [];
    for (const [stage, at] of seen) {
      const note = notified.get(stage);
      if (note !== undefined) out.push(Math.max(0, note - at));
    }
    say(
      `  video ${n + 1}: ${seen.size} stages seen by the poller in ${((performance.now() - started) / 1000).toFixed(1)} s; delays ${out.map((d) => d.toFixed(0)).join(', ')} ms`,
    );
    return out;

    async function poll(id: number) {
      while (!done) {
        const view = (await (await fetch(`${service.url}/api/v1/videos/${id}`, { headers: auth })).json()) as Obj;
        if (typeof view.stage === 'string' && !seen.has(view.stage)) seen.set(view.stage, performance.now());
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }
} finally {
  await service.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}
