// The quality tests (test/quality/*.test.ts): cases of the media matrix (scripts/lib/media-matrix.ts)
// requested over HTTP from a real app with workers, each output checked by the media quality
// checker (src/media/quality/check.ts) with the manifest its pipeline recorded. Every case must
// render, record its manifest and pass every check; a failure names the case and its failing rows.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { stopOcr } from '../../src/media/ocr.ts';
import { checkMedia } from '../../src/media/quality/check.ts';
import type { MatrixCase } from '../../scripts/lib/media-matrix.ts';
import { caseRunner, runAll } from '../../scripts/lib/media-run.ts';
import { startTestApp } from './app.ts';

/** Checks `cases` in a subtest of their own (the app lives as long as it). */
export function checkCases(t: Test, cases: MatrixCase[], parallel = 2): Promise<void> {
  return t.test(`${cases.length} outputs pass the media quality checker`, (t) => checkAll(t, cases, parallel)).then(() => {});
}

async function checkAll(t: Test, cases: MatrixCase[], parallel: number): Promise<void> {
  const app = await startTestApp(t, { RATE_LIMIT_GENERATIONS: '100000' }, { workers: true });
  const ws = await app.workspace({ credits: 10_000_000 });
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quality-'));
  t.teardown(async () => {
    fs.rmSync(outDir, { recursive: true, force: true });
    await stopOcr();
  });
  const run = caseRunner({ url: app.url, key: ws.key, db: app.service.ctx.db, outDir });
  t.ok(cases.length > 0, 'cases to check');
  await runAll(run, cases, parallel, async (r) => {
    if (!r.file) return void t.fail(`${r.case.name}: ${r.error}`);
    t.ok(r.manifest, `${r.case.name}: its pipeline recorded a manifest`);
    const report = await checkMedia(r.file, r.manifest);
    const failing = report.rows.filter((x) => !x.pass).map((x) => `${x.check} ${x.subject}: ${x.value} vs ${x.limit} (${x.detail})`);
    t.same(failing, [], `${r.case.name}: every check passes (${report.rows.length} rows)`);
    // Every text a manifest placed is read back (a slideshow without overlays places none).
    if (r.manifest?.texts.length)
      t.ok(
        report.rows.some((x) => x.check === 'text-readback'),
        `${r.case.name}: its texts were read back`,
      );
    fs.rmSync(r.file, { force: true });
  });
}
