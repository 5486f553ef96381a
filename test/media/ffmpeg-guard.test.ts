// Every ffmpeg run is guarded (security issue, points 1, 3 and 7): a render does not outlive the
// process that started it (SIGKILL of a worker leaves no ffmpeg behind, nor a speech synthesizer:
// both are gone within a second, measured without reaping the killed process meanwhile), an abort
// kills the whole process group, each process has an address-space limit, and a job's work folder
// starts empty (what a killed attempt left is removed by the next one, or by the sweep).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { configureMediaLimits, FFMPEG_PATH, FfmpegError, mediaLimits, runFfmpeg } from '../../src/media/ffmpeg.ts';
import { jobFolder, sweepWorkFolders } from '../../src/media/work-folder.ts';
import { descendants, goneWithin } from '../helpers/process.ts';

/** Pids of live processes whose command line contains `needle`. */
function processesWith(needle: string): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const state = fs.readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmd.includes(needle) && state !== 'Z') out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function until(what: string, fn: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!fn()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now() - started;
}

/** A long render nobody waits for: 10 minutes of test pattern in real time, tagged with `marker`. */
const longRender = (marker: string) => [
  '-re',
  '-f',
  'lavfi',
  '-i',
  'testsrc=size=160x120:rate=10:duration=600',
  '-metadata',
  `title=${marker}`,
  '-f',
  'null',
  '-',
];

/**
 * Runs `code` (a module) as a Node process, waits until a process below it runs `program` with an
 * argument containing `needle`, kills the Node process with SIGKILL, and says how long the
 * processes below it took to be gone (-1: not within 5 s), polling /proc without reaping the killed
 * process meanwhile.
 */
async function killDuring(t: Test, code: string, program: string, needle: string): Promise<{ ms: number; names: string }> {
  const script = path.join(os.tmpdir(), `guard-${randomBytes(6).toString('hex')}.ts`);
  fs.writeFileSync(script, code);
  t.teardown(() => fs.rmSync(script, { force: true }));
  const worker = spawn(process.execPath, [script], { stdio: ['ignore', 'ignore', 'inherit'] });
  let below: { pid: number; argv: string[] }[] = [];
  t.teardown(() => {
    for (const p of [worker.pid!, ...below.map((b) => b.pid)]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {}
    }
  });
  const started = () => (below = descendants(worker.pid!)).some((p) => p.argv[0] === program && p.argv.some((a) => a.includes(needle)));
  await until(`${needle} to start`, started, 30_000);
  worker.kill('SIGKILL');
  const ms = goneWithin(
    below.map((p) => p.pid),
    5_000,
  );
  return { ms, names: below.map((p) => `${p.pid} ${path.basename(p.argv[0])}`).join(', ') };
}

t.test('SIGKILL of the Node process that started ffmpeg: the ffmpeg is gone within a second', async (t) => {
  const marker = `guard-${randomBytes(6).toString('hex')}`;
  const { ms, names } = await killDuring(
    t,
    `import { runFfmpeg } from ${JSON.stringify(path.resolve('src/media/ffmpeg.ts'))};\n` +
      `runFfmpeg(${JSON.stringify(longRender(marker))}).catch(() => {});\n` +
      `setInterval(() => {}, 1000);\n`,
    FFMPEG_PATH,
    `title=${marker}`,
  );
  t.ok(
    ms >= 0 && ms <= 1000,
    `ffmpeg and its guard (${names}) gone ${ms < 0 ? 'not within 5 s' : `${ms} ms`} after their parent was killed`,
  );
});

t.test('SIGKILL of the Node process synthesizing speech: the synthesizer is gone within a second', async (t) => {
  // About 7 s of work for the synthesizer (400 sentences, half an hour of speech).
  const text = Array.from({ length: 400 }, (_, i) => `Sentence number ${i} keeps the synthesizer busy for a while.`).join(' ');
  const out = path.join(os.tmpdir(), `guard-${randomBytes(6).toString('hex')}.wav`);
  t.teardown(() => fs.rmSync(out, { force: true }));
  const { ms, names } = await killDuring(
    t,
    `import { synthesizeSpeech } from ${JSON.stringify(path.resolve('src/engines/speech/espeak.ts'))};\n` +
      `synthesizeSpeech(${JSON.stringify(text)}, ${JSON.stringify(out)}, { voice: 'en-us' }).catch(() => {});\n` +
      `setInterval(() => {}, 1000);\n`,
    process.execPath,
    'espeak-worker.ts',
  );
  t.ok(
    ms >= 0 && ms <= 1000,
    `the synthesizer and its guard (${names}) gone ${ms < 0 ? 'not within 5 s' : `${ms} ms`} after their parent was killed`,
  );
});

t.test('an abort kills the run at once (the whole process group)', async (t) => {
  const marker = `abort-${randomBytes(6).toString('hex')}`;
  const ac = new AbortController();
  const run = runFfmpeg(longRender(marker), { signal: ac.signal });
  await until('ffmpeg to start', () => processesWith(`title=${marker}`).length > 0, 10_000);
  ac.abort(new Error('stop'));
  await t.rejects(run, /stop/);
  const ms = await until('every process of the run to die', () => processesWith(marker).length === 0, 3_000);
  t.pass(`gone ${ms} ms after the abort`);
});

t.test('each ffmpeg process runs under an address-space limit', async (t) => {
  const before = mediaLimits.maxMemoryMb;
  t.teardown(() => configureMediaLimits({ maxMemoryMb: before }));
  configureMediaLimits({ maxMemoryMb: 48 });
  const err = await runFfmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=1920x1080:rate=25:duration=1',
    '-c:v',
    'libx264',
    '-f',
    'null',
    '-',
  ]).catch((e) => e);
  t.ok(err instanceof FfmpegError, `a 48 MiB limit stops a 1080p encode (${String(err?.message).split('\n')[0]})`);
  configureMediaLimits({ maxMemoryMb: before });
  await runFfmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=1920x1080:rate=25:duration=1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-f',
    'null',
    '-',
  ]);
  t.pass(`the default limit (${before} MiB) lets it run`);
});

t.test('work folders: a job attempt starts empty; the sweep removes what dead processes left, never a live one', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'work-folders-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const first = await jobFolder(dataDir, 'export-123');
  fs.writeFileSync(path.join(first, 'partial.mp4'), 'left by a killed attempt');
  const again = await jobFolder(dataDir, 'export-123');
  t.equal(again, first);
  t.same(fs.readdirSync(again), ['.owner'], 'the next attempt of the same job starts empty (but for its owner mark)');
  // Old, but its owner (this process) is alive: it stays.
  const old = await jobFolder(dataDir, 'gen-old');
  const past = new Date(Date.now() - 2 * 24 * 3600 * 1000);
  fs.utimesSync(old, past, past);
  // Left by a process that is gone (a pid no process has).
  const dead = await jobFolder(dataDir, 'gen-dead');
  fs.writeFileSync(path.join(dead, '.owner'), JSON.stringify({ pid: 2 ** 22 + 7, start: '1' }));
  // Unmarked (an older release): removed once a day old.
  fs.mkdirSync(path.join(dataDir, 'tmp', 'unmarked-old'));
  fs.utimesSync(path.join(dataDir, 'tmp', 'unmarked-old'), past, past);
  fs.mkdirSync(path.join(dataDir, 'tmp', 'unmarked-new'));
  t.equal(await sweepWorkFolders(dataDir), 2);
  t.same(
    fs.readdirSync(path.join(dataDir, 'tmp')).sort(),
    ['export-123', 'gen-old', 'unmarked-new'],
    'live and recent folders stay; dead-owner and old unmarked ones are gone',
  );
  await t.rejects(jobFolder(dataDir, '../escape'), /Invalid work folder name/);
});
