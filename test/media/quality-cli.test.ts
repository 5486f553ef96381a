// `npm run check:media -- FILE…` (scripts/check-media.ts) as a real process: it reads
// FILE.media.json as the manifest, prints a table per file and exits 0 when everything passes,
// 1 when a check fails, 2 when a file cannot be read.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { inDir, poster, writeManifest } from './quality-fixtures.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quality-cli-'));
const at = inDir(dir);
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

async function checkMedia(args: string[], viaNpm = false): Promise<{ code: number; stdout: string; stderr: string }> {
  const [cmd, argv] = viaNpm
    ? ['npm', ['run', '-s', 'check:media', '--', ...args]]
    : [process.execPath, ['scripts/check-media.ts', ...args]];
  try {
    const { stdout, stderr } = await run(cmd, argv, { cwd: root, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const base = {
  width: 720,
  height: 900,
  background: 'url(#g)',
  gradient: ['#1d2b64', '#f8cdda'] as [string, string],
  pattern: 'circles' as const,
};
const headline = { text: 'Fresh citrus water', px: 64, color: '#ffffff', x: 72, y: 120, maxWidth: 560, scrim: 'rgba(10,12,30,0.78)' };

t.test('a good poster with its manifest: a table of passes, exit 0 (through npm run)', async (t) => {
  writeManifest(at('good.png'), await poster(at('good.png'), { ...base, texts: [headline] }));
  const r = await checkMedia([at('good.png')], true);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /good\.png \(image, 720×900\): PASS/);
  t.match(r.stdout, /result\s+check\s+subject\s+value\s+limit\s+detail/);
  for (const check of ['text-fit', 'text-contrast', 'text-readback', 'uncovered-canvas'])
    t.match(r.stdout, new RegExp(`\\npass\\s+${check}\\s`), `${check} row`);
  t.notMatch(r.stdout, /FAIL/);
});

t.test('a failing file among good ones: its FAIL rows, exit 1', async (t) => {
  writeManifest(
    at('low.png'),
    await poster(at('low.png'), {
      width: 720,
      height: 900,
      background: '#f3eee3',
      pattern: 'none',
      texts: [{ ...headline, scrim: undefined }],
    }),
  );
  const r = await checkMedia([at('good.png'), at('low.png')]);
  t.equal(r.code, 1);
  t.match(r.stdout, /good\.png \(image, 720×900\): PASS/);
  t.match(r.stdout, /low\.png \(image, 720×900\): FAIL/);
  t.match(r.stdout, /\nFAIL\s+text-contrast\s+headline "Fresh citrus water"\s+1\.\d+\s+≥ 4\.5/);
  const json = await checkMedia(['--json', at('low.png')]);
  t.equal(json.code, 1);
  t.match(JSON.parse(json.stdout), {
    reports: [
      {
        pass: false,
        rows: [
          { check: 'text-fit', pass: true },
          { check: 'text-contrast', pass: false },
        ],
      },
    ],
  });
});

t.test('--slides: alike neighbours fail; an unreadable file exits 2', async (t) => {
  const r = await checkMedia(['--slides', at('good.png'), at('good.png')]);
  t.equal(r.code, 1);
  t.match(r.stdout, /slides \(2 images in order\): FAIL scene-distinct 0/);
  fs.writeFileSync(at('notes.txt'), 'not media');
  const bad = await checkMedia([at('notes.txt')]);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /notes\.txt: cannot be checked/);
  const none = await checkMedia([]);
  t.equal(none.code, 2);
  t.match(none.stderr, /usage: npm run check:media/);
});
