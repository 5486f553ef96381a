// Benchmark: the media quality of the local engines, with render times. Renders the media matrix
// (scripts/lib/media-matrix.ts: every static, video and UGC ad template in each aspect, slideshows
// by aspect, overlays and language, faceless videos by style, aspect and duration) over the API of
// a service started here, runs the media quality checker (src/media/quality/check.ts) over each
// output with the manifest its pipeline recorded, and prints one row per output (render seconds,
// checks passed, the failing checks) and a summary per pipeline. Exits 1 when any output fails.
// Usage: node bench/quality.ts [--only NAME-PART]… [--durations 15,30,60] [--parallel 2] [--keep DIR]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stopOcr } from '../src/media/ocr.ts';
import { checkMedia, type QualityReport } from '../src/media/quality/check.ts';
import { manifestPathOf } from '../src/media/quality/manifest.ts';
import { mediaMatrix, type Pipeline } from '../scripts/lib/media-matrix.ts';
import { type CaseResult, runAll, startRunner } from '../scripts/lib/media-run.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true, default: [] },
    durations: { type: 'string', default: '15,30,60' },
    parallel: { type: 'string', default: '2' },
    keep: { type: 'string' },
  },
});
const say = (s: string) => process.stdout.write(`${s}\n`);
const cases = mediaMatrix({ only: values.only, durations: values.durations.split(',').map(Number) });
const out = values.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'bench-quality-'));

interface Row {
  result: CaseResult;
  report?: QualityReport;
  checkSeconds: number;
}

const rows: Row[] = [];
say(`quality bench: ${cases.length} outputs, ${values.parallel} at a time (embedded PostgreSQL, local engines) …`);
const runner = await startRunner(out);
try {
  await runAll(runner.run, cases, Number(values.parallel), async (r, done, total) => {
    const started = Date.now();
    // Kept outputs get their manifest beside them, so `npm run check:media -- FILE` reads it.
    if (values.keep && r.file && r.manifest) fs.writeFileSync(manifestPathOf(r.file), JSON.stringify(r.manifest, null, 1));
    const report = r.file
      ? await checkMedia(r.file, r.manifest, { expectNarration: r.case.pipeline === 'faceless_video' && !r.manifest?.narration })
      : undefined;
    const row = { result: r, report, checkSeconds: (Date.now() - started) / 1000 };
    rows.push(row);
    say(`[${done}/${total}] ${line(row)}`);
  });
} finally {
  await runner.stop();
  await stopOcr();
  if (!values.keep) fs.rmSync(out, { recursive: true, force: true });
}

function line({ result, report, checkSeconds }: Row): string {
  const name = result.case.name.padEnd(48);
  if (!report) return `${name} FAILED to render: ${result.error}`;
  const passed = report.rows.filter((x) => x.pass).length;
  const failing = report.rows.filter((x) => !x.pass).map((x) => `${x.check}(${x.subject}: ${x.value} vs ${x.limit})`);
  return `${name} render ${result.seconds.toFixed(1).padStart(5)} s  check ${checkSeconds.toFixed(1).padStart(4)} s  ${passed}/${report.rows.length} ${report.pass ? 'pass' : `FAIL ${failing.join('; ')}`}${result.manifest ? '' : '  (no manifest)'}`;
}

say('');
say('pipeline         outputs  pass   render s (mean)  render s (max)');
const pipelines: Pipeline[] = ['static_ad', 'video_ad', 'ugc_ad', 'slideshow', 'faceless_video'];
let failed = 0;
for (const p of pipelines) {
  const mine = rows.filter((r) => r.result.case.pipeline === p);
  if (!mine.length) continue;
  const ok = mine.filter((r) => r.report?.pass).length;
  failed += mine.length - ok;
  const times = mine.map((r) => r.result.seconds);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  say(
    `${p.padEnd(16)} ${String(mine.length).padStart(7)}  ${`${Math.round((100 * ok) / mine.length)} %`.padStart(5)}  ${mean.toFixed(1).padStart(15)}  ${Math.max(
      ...times,
    )
      .toFixed(1)
      .padStart(14)}`,
  );
}
say('');
say(
  failed ? `quality bench: ${failed} of ${rows.length} outputs fail a check` : `quality bench: all ${rows.length} outputs pass every check`,
);
process.exitCode = failed ? 1 : 0;
