// The media quality checker from the command line (src/media/quality/check.ts):
//
//   npm run check:media -- [--narration] [--slides] [--json] FILE…
//
// Checks each FILE (image, video or sound) with its manifest FILE.media.json when there is one
// (src/media/quality/manifest.ts: what the renderer placed), prints one table per file (a row per
// check: pass or FAIL, the value against its limit) and exits 1 when any check fails, 2 when a file
// cannot be read. --narration: narration is expected even where no manifest lists it (the
// speech heard in the audio counts as narration). --slides: the FILEs (images) are also one sequence whose
// consecutive members must differ. --json: the reports as JSON instead of tables.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { stopOcr } from '../src/media/ocr.ts';
import { checkMedia, checkSlides, formatReport, type QualityReport } from '../src/media/quality/check.ts';
import { type MediaManifest, manifestPathOf } from '../src/media/quality/manifest.ts';

/** FILE.media.json, when present; a manifest that is not one is an error. */
function manifestOf(file: string): MediaManifest | undefined {
  const at = manifestPathOf(file);
  if (!fs.existsSync(at)) return undefined;
  const m = JSON.parse(fs.readFileSync(at, 'utf8')) as MediaManifest;
  if (typeof m?.width !== 'number' || typeof m.height !== 'number' || !Array.isArray(m.texts))
    throw new Error(`${at} is not a media manifest (width, height and texts are required)`);
  return m;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { narration: { type: 'boolean' }, slides: { type: 'boolean' }, json: { type: 'boolean' } },
  });
  if (!positionals.length) {
    process.stderr.write('usage: npm run check:media -- [--narration] [--slides] [--json] FILE…\n');
    return 2;
  }
  const reports: QualityReport[] = [];
  let unreadable = false;
  for (const file of positionals) {
    try {
      reports.push(await checkMedia(file, manifestOf(file), { expectNarration: values.narration }));
    } catch (err) {
      unreadable = true;
      process.stderr.write(`${file}: cannot be checked: ${(err as Error).message}\n`);
    }
  }
  const slides = values.slides && positionals.length >= 2 ? await checkSlides(positionals) : undefined;
  if (values.json) process.stdout.write(`${JSON.stringify({ reports, slides }, null, 2)}\n`);
  else {
    process.stdout.write(reports.map(formatReport).join('\n\n'));
    if (slides)
      process.stdout.write(
        `\n\nslides (${positionals.length} images in order): ${slides.pass ? 'pass' : 'FAIL'} ${slides.check} ${slides.value} (limit ${slides.limit}): ${slides.detail}`,
      );
    process.stdout.write('\n');
  }
  if (unreadable) return 2;
  return reports.every((r) => r.pass) && (slides?.pass ?? true) ? 0 : 1;
}

try {
  process.exitCode = await main();
} catch (err) {
  process.stderr.write(`check:media: ${(err as Error).message}\n`);
  process.exitCode = 2;
} finally {
  await stopOcr();
}
