// npm test (and npm run test:faults): one PostgreSQL for the whole suite (TEST_DATABASE_URL, else a fresh embedded
// cluster in a temporary folder), a migrated template database, then tap. Each test file
// clones the template into a database of its own (test/helpers/db.ts), so files run in
// parallel without sharing state.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PgBoss } from 'pg-boss';
import postgres from 'postgres';
import { runMigrations } from '../src/db/client.ts';
import { startEmbedded } from '../src/db/embedded.ts';

const TEMPLATE = 'media_api_test_template';
// Ours, not tap's: taken out before tap's configuration reads the command line.
const faults = process.argv.includes('--faults');
process.argv = process.argv.filter((a) => a !== '--faults');
const say = (s: string) => process.stderr.write(`test: ${s}\n`);

let adminUrl = process.env.TEST_DATABASE_URL;
let stop = async () => {};
let tmp: string | undefined;
if (!adminUrl) {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-test-'));
  say(`starting embedded PostgreSQL in ${tmp} …`);
  const started = Date.now();
  const pg = await startEmbedded({ dataDir: tmp });
  adminUrl = pg.adminUrl;
  stop = pg.stop;
  say(`PostgreSQL ready in ${Date.now() - started} ms`);
}

// Ctrl-C or SIGTERM: tap's run is ended (it stops its test processes) and the cleanup below runs as
// after a finished run; before tap started, the cluster is stopped and its folder removed at once.
// Either way no PostgreSQL is left running and no temporary folder left behind.
let interrupted: NodeJS.Signals | undefined;
let tapProcess: ReturnType<typeof spawn> | undefined;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (interrupted) return;
    interrupted = sig;
    say(`${sig}: stopping …`);
    if (tapProcess) tapProcess.kill(sig);
    else
      void stop().finally(() => {
        if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
        process.exit(sig === 'SIGINT' ? 130 : 143);
      });
  });
}

const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
if (tmp) {
  // The suite's own throwaway cluster: no fsync and no full-page images. A crash of the machine would
  // lose it, which is fine for a cluster deleted at the end; a crash of PostgreSQL itself still loses
  // nothing (the WAL is written before every commit returns), and the fault tests that kill PostgreSQL
  // run clusters of their own with the service's settings. Every commit and every dropped test
  // database stops waiting for the disk.
  await admin.unsafe('alter system set fsync = off');
  await admin.unsafe('alter system set full_page_writes = off');
  await admin.unsafe('select pg_reload_conf()');
}
await admin.unsafe(`drop database if exists ${TEMPLATE} with (force)`);
await admin.unsafe(`create database ${TEMPLATE}`);
const templateUrl = new URL(adminUrl);
templateUrl.pathname = `/${TEMPLATE}`;
await runMigrations(templateUrl.toString());
// pg-boss installs its schema on first start; do it once here so every cloned database has it.
const boss = new PgBoss({ connectionString: templateUrl.toString(), schema: 'pgboss', supervise: false, schedule: false, max: 2 });
await boss.start();
await boss.stop({ graceful: false });
await admin.end();
say('template database migrated (application schema and pg-boss)');

// tap compiles its Test class from the configured plugin set, and rebuilds it when the set differs
// (`"!@tapjs/typescript"` in package.json: Node strips the types itself). But the runner computes the
// test processes' loader flags before that rebuild, so the first run after `npm ci` would load every
// test file through ts-node (the default plugin set) — most of CI's time. Rebuild first when needed.
const { TapConfig } = await import('@tapjs/config');
const { signature } = await import('@tapjs/test');
const tapConfig = await TapConfig.load();
if (signature !== tapConfig.pluginSignature) {
  say('building tap for the configured plugins …');
  const built = spawnSync(process.execPath, [path.resolve('node_modules/tap/dist/esm/run.mjs'), 'build'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (built.status !== 0) {
    say(`tap build failed (exit ${built.status})`);
    process.exit(1);
  }
}

// `npm test`: every test file outside test/faults/. `npm run test:faults` (`--faults`): the fault suite,
// test/faults/ (real processes killed, databases lost, disks filled: slow by nature, run by CI as well).
// Files named on the command line run as named.
const tapArgs = process.argv.slice(2);
if (!tapArgs.some((a) => a.endsWith('.ts') || fs.existsSync(a))) {
  const files = fs.globSync('test/**/*.test.ts').filter((f) => f.startsWith('test/faults/') === faults);
  tapArgs.push(...longestFirst(files));
  // Three files at a time keep both cores busy while some wait on timers and child processes; the
  // fault suite, which measures recovery times and latencies, runs two.
  if (faults && !tapArgs.some((a) => a.startsWith('--jobs') || a === '-j')) tapArgs.unshift('--jobs=2');
}
const child = (tapProcess = spawn(process.execPath, [path.resolve('node_modules/tap/dist/esm/run.mjs'), ...tapArgs], {
  stdio: ['inherit', 'pipe', 'inherit'],
  // Node's compile cache (V8 code and stripped TypeScript) shared by every test file and every process
  // a test starts: each of them loads about 1,500 modules, and compiling them again and again was a
  // large share of the suite's CPU time.
  env: {
    ...process.env,
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.resolve('node_modules/.cache/node-compile-cache'),
    NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${JSON.stringify(path.resolve('test/helpers/processinfo-off.ts'))}`]
      .filter(Boolean)
      .join(' '),
    TEST_PG_ADMIN_URL: adminUrl,
    TEST_TEMPLATE_DB: TEMPLATE,
  },
}));
// Pass tap's report through, remembering its closing summary `# { total: N, pass: N, fail: N, … }`.
let tail = '';
let line = '';
const took = new Map<string, number>();
child.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  const text = chunk.toString();
  tail = (tail + text).slice(-4096);
  // Each file's time, from its result line `ok 12 - test/x.test.ts # time=1234.5ms`.
  const lines = (line + text).split('\n');
  line = lines.pop()!;
  for (const l of lines) {
    const m = /^(?:not )?ok \d+ - (test\/\S+\.test\.ts) # time=([\d.]+)ms/.exec(l);
    if (m) took.set(m[1], Number(m[2]));
  }
});
const code: number = await new Promise((resolve) => child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
const summary = /# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?(?:, skip: (\d+))?/.exec(tail);
if (summary) {
  const [, , pass = '0', fail = '0', skip] = summary;
  const failed = Number(fail) || (code !== 0 ? 1 : 0);
  process.stdout.write(
    `\ntests: ${pass} passed, ${failed} failed${skip ? `, ${skip} skipped` : ''}${interrupted ? ` (interrupted by ${interrupted})` : ''}\n`,
  );
}

saveDurations(took);

const cleanup = postgres(adminUrl, { max: 1, onnotice: () => {} });
const leftovers = await cleanup`select datname from pg_database where datname like 'test_%'`;
for (const { datname } of leftovers) await cleanup.unsafe(`drop database if exists "${datname}" with (force)`);
await cleanup.end();
await stop();
if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
process.exit(interrupted ? (interrupted === 'SIGINT' ? 130 : 143) : code);

// Files start longest first, so that the last ones to finish are short and the jobs end together:
// by the time each took in earlier runs on this checkout (kept beside Node's compile cache), else
// by size, which follows it roughly. Files new since then start first.
function durationsFile(): string {
  return path.resolve('node_modules/.cache/test-durations.json');
}

/** Each file's time in ms from earlier runs ({} before the first). */
function readDurations(): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(durationsFile(), 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

function longestFirst(files: string[]): string[] {
  const known = readDurations();
  const unknown = files
    .filter((f) => known[f] === undefined)
    .sort((a, b) => fs.statSync(b).size - fs.statSync(a).size || a.localeCompare(b));
  const timed = files.filter((f) => known[f] !== undefined).sort((a, b) => known[b] - known[a] || a.localeCompare(b));
  return [...unknown, ...timed];
}

function saveDurations(took: Map<string, number>): void {
  if (!took.size) return;
  const known = readDurations();
  for (const [f, ms] of took) known[f] = Math.round(ms);
  for (const f of Object.keys(known)) if (!fs.existsSync(f)) delete known[f];
  fs.mkdirSync(path.dirname(durationsFile()), { recursive: true });
  fs.writeFileSync(durationsFile(), `${JSON.stringify(known, null, 1)}\n`);
}
