// The media quality checker (issue 24): is an image, video or sound the local engines made fit to
// publish? `npm run check:media -- FILE…` (scripts/check-media.ts) prints its report as a table;
// tests and renderers call it directly.
//
//   checkMedia(file, manifest?, opts?) → Promise<QualityReport>   one file (PNG, JPEG, WebP, MP4, WebM, audio)
//   checkSlides(files) → Promise<QualityRow>                      scene distinctness over a list of images
//   formatReport(report) → string                                 the table the CLI prints
//   stopOcr() (../ocr.ts)                                         ends the OCR worker (call at shutdown)
//
// A report has one row per check and subject, {check, subject, pass, value, limit, detail}, and
// `pass` when every row passes. The manifest (./manifest.ts) is what the renderer knows it made:
// each text's words, box, time span and fill colours (color, and colors for highlighted words:
// name them, or the contrast and OCR have to guess which pixels are the text), the safe zone, the
// scene starts, the narration spans and the requested length. Without it the checks that need
// none still run. The checks:
//   text-fit         every placed box inside the frame with ≥ 4 % margins, out of the safe zone's
//                    top and bottom bands, and no glyphs running past its left or right edge (./pixels.ts)
//   text-readback    OCR of the box reads the placed words back (./text.ts: similarity ≥ 0.8 and the last word read)
//   text-contrast    WCAG contrast ≥ 4.5:1 between the glyphs and the pixels right next to them,
//                    worst segment of the line (./pixels.ts; an outline or a scrim counts)
//   uncovered-canvas no straight black or transparent bar along an edge of any sampled frame (./pixels.ts)
//   scene-distinct   consecutive scenes (manifest.sceneStarts, else detected cuts; checkSlides: images)
//                    differ by ≥ 10 of the 64 bits of their perceptual hashes (sharp-phash)
//   narration-coverage / narration-tail   when narration is expected (manifest.narration, or
//                    opts.expectNarration with the speech heard in the audio as narration:
//                    ./sample.ts speechSpans, a music bed alone is not speech): they cover
//                    ≥ 90 % of requestedSeconds (else the duration) and leave no tail over 1.5 s
//   silent-audio     an audio stream peaks above −60 dBFS (no audio stream at all passes)
// Texts of a video are looked at in the frame at the middle of their span (the whole video's middle
// when they have none). The work is bounded: at most opts.maxTexts texts are read and measured
// (evenly chosen; the rest get the geometric checks only), frames are read in one ffmpeg pass, every
// ffmpeg run and every OCR call has a deadline (a check cut short fails: it proved nothing).
import sharp, { type SharpOptions } from 'sharp';
import phashModule from 'sharp-phash';
import distanceModule from 'sharp-phash/distance.js';
import { type MediaFile, type ProbeResult, probe, sniffFile } from '../ffmpeg.ts';
import { recognizeText } from '../ocr.ts';
import type { Box, MediaManifest, PlacedText } from './manifest.ts';
import { clampBox, type Frame, inkAcrossEdge, inkImage, inkOf, textContrast, uncoveredBar } from './pixels.ts';
import { decodeFrame, measureAudio, sampleVideo } from './sample.ts';
import { OCR_LINE_PX, padOf, pct, READ_BACK_THRESHOLD, readBackVerdict, textPlacement, upscaleOf } from './text.ts';

// sharp-phash is CommonJS (module.exports = fn); its typings declare ES default exports.
const phash = phashModule as unknown as (image: Buffer, options?: SharpOptions) => Promise<string>;
const hashDistance = distanceModule as unknown as (a: string, b: string) => number;

export type CheckName =
  | 'manifest'
  | 'text-fit'
  | 'text-readback'
  | 'text-contrast'
  | 'uncovered-canvas'
  | 'scene-distinct'
  | 'narration-coverage'
  | 'narration-tail'
  | 'silent-audio';

export interface QualityRow {
  check: CheckName;
  /** What was checked: a text (its role and words), `frames`, `scenes`, `audio`. */
  subject: string;
  pass: boolean;
  /** The measure (a number where there is one). */
  value: number | string;
  /** What it must be, e.g. `≥ 4.5`. */
  limit: string;
  detail: string;
}

export interface QualityReport {
  file: string;
  kind: 'image' | 'video' | 'audio';
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
  /** Whether a manifest was given (without one, the placed-text checks do not run). */
  manifest: boolean;
  pass: boolean;
  rows: QualityRow[];
}

export interface CheckOptions {
  /** Narration is expected though the manifest lists none: the speech heard in the audio counts as narration. */
  expectNarration?: boolean;
  /** Texts read and measured (default 24). */
  maxTexts?: number;
  /** Evenly spaced frames sampled for uncovered canvas (default 16, at most 2 a second). */
  maxSamples?: number;
  /** Deadline of each OCR call (default 8 s) and of each ffmpeg run (default 90 s). */
  ocrDeadlineMs?: number;
  ffmpegDeadlineMs?: number;
  signal?: AbortSignal;
}

export const LIMITS = { contrast: 4.5, sceneBits: 10, coverage: 0.9, tailSeconds: 1.5, silentDb: -60 } as const;

const round = (v: number, digits = 2) => Math.round(v * 10 ** digits) / 10 ** digits;
/** The text's fill colours the manifest names, main first. */
const colorsOf = (t: PlacedText) => [t.color, ...(t.colors ?? [])].filter((c): c is string => !!c);
const subjectOf = (t: PlacedText) => `${t.role} "${t.text.length > 28 ? `${t.text.slice(0, 27)}…` : t.text}"`;

/** At most `max` indices of `n`, evenly spread, first and last included. */
function pickEvenly(n: number, max: number): Set<number> {
  if (n <= max) return new Set(Array.from({ length: n }, (_, i) => i));
  return new Set(Array.from({ length: max }, (_, i) => Math.round((i * (n - 1)) / Math.max(1, max - 1))));
}

/** The time a text is looked at: the middle of its span, else the middle of the video. */
function textTime(t: PlacedText, duration: number): number {
  const from = t.fromSeconds ?? 0;
  const to = t.toSeconds ?? duration;
  return (from + Math.min(to, duration)) / 2;
}

/** The middle of each scene. */
function sceneMids(starts: number[], duration: number): number[] {
  const s = [...starts].sort((a, b) => a - b).filter((t) => t < duration);
  return s.map((t, i) => (t + (s[i + 1] ?? duration)) / 2);
}

/** The manifest's texts at the file's size (a manifest of another size is reported and scaled). */
function scaledTexts(manifest: MediaManifest | undefined, width: number, height: number, rows: QualityRow[]): PlacedText[] {
  if (!manifest) return [];
  if (manifest.width === width && manifest.height === height) return manifest.texts;
  rows.push({
    check: 'manifest',
    subject: 'size',
    pass: false,
    value: `${manifest.width}×${manifest.height}`,
    limit: `${width}×${height}`,
    detail: 'the manifest describes another size than the file has; its boxes were scaled',
  });
  const sx = width / manifest.width;
  const sy = height / manifest.height;
  return manifest.texts.map((t) => ({ ...t, box: { x: t.box.x * sx, y: t.box.y * sy, w: t.box.w * sx, h: t.box.h * sy } }));
}

/** The box with padding as a black-on-white image of the text's colour (./pixels.ts inkImage), upscaled, as PNG for OCR. */
async function ocrImage(frame: Frame, box: Box, colors: string[], linePx: number, shrink = false): Promise<Buffer | undefined> {
  const found = inkOf(frame, box, colors);
  const pad = padOf(box);
  const r = clampBox({ x: box.x - pad, y: box.y - pad, w: box.w + 2 * pad, h: box.h + 2 * pad }, frame);
  if (!found || r.w < 4 || r.h < 4) return undefined;
  const scale = shrink ? linePx / box.h : upscaleOf(box, linePx);
  let img = sharp(inkImage(frame, r, found), { raw: { width: r.w, height: r.h, channels: 1 } });
  if (scale !== 1) img = img.resize({ width: Math.round(r.w * scale), height: Math.round(r.h * scale), kernel: 'lanczos3' });
  return img.png({ compressionLevel: 1 }).toBuffer();
}

interface TextContext {
  width: number;
  height: number;
  manifest: MediaManifest;
  frameOf: (t: PlacedText) => Frame | undefined;
  measured: Set<number>;
  textCount: number;
  ocrDeadlineMs: number;
}

/** The three rows of one placed text (read-back and contrast only for measured texts with a frame). */
async function textRows(t: PlacedText, index: number, c: TextContext): Promise<QualityRow[]> {
  const subject = subjectOf(t);
  const place = textPlacement(t, c.width, c.height, c.manifest.safeZone);
  const frame = c.measured.has(index) ? c.frameOf(t) : undefined;
  const overflow = frame ? inkAcrossEdge(frame, t.box, Math.max(padOf(t.box), Math.round(t.box.h / 2)), t.color) : undefined;
  const fitProblems = [...place.problems, ...(overflow ? [`glyphs run past the box's ${overflow} edge (clipped or overflowing)`] : [])];
  const rows: QualityRow[] = [
    {
      check: 'text-fit',
      subject,
      pass: fitProblems.length === 0,
      value: pct(place.margin),
      limit: `margins ≥ ${pct(0.04)}${c.manifest.safeZone ? `, out of top ${pct(c.manifest.safeZone.top)} / bottom ${pct(c.manifest.safeZone.bottom)}` : ''}`,
      detail:
        fitProblems.join('; ') ||
        (frame
          ? 'inside its box and the frame'
          : `inside the frame (pixels not looked at: ${c.measured.size} of ${c.textCount} texts are)`),
    },
  ];
  if (!frame) return c.measured.has(index) ? [...rows, readBackRow(subject, null, c.ocrDeadlineMs)] : rows;
  const contrast = textContrast(frame, t.box, colorsOf(t));
  rows.push({
    check: 'text-contrast',
    subject,
    pass: contrast.ratio >= LIMITS.contrast,
    value: round(contrast.ratio),
    limit: `≥ ${LIMITS.contrast}`,
    detail:
      contrast.textShare === 0
        ? 'no text visible in the box (one colour)'
        : `text luminance ${round(contrast.text, 3)} on ${round(contrast.background, 3)} (${Math.round(contrast.textShare * 100)} % of the box is text)`,
  });
  rows.push(await readBack(t, frame, subject, c.ocrDeadlineMs));
  return rows;
}

/** The read-back row of a text: read at each size of OCR_LINE_PX in turn until a reading passes. */
async function readBack(t: PlacedText, frame: Frame, subject: string, deadlineMs: number): Promise<QualityRow> {
  let row: QualityRow | undefined;
  for (const linePx of OCR_LINE_PX) {
    // A box already this tall is read at its own size once.
    if (row && upscaleOf(t.box, linePx) === upscaleOf(t.box)) break;
    const png = await ocrImage(frame, t.box, colorsOf(t), linePx);
    const ocr = png ? await recognizeText(png, deadlineMs) : { text: '', timedOut: false };
    const next = readBackRow(subject, ocr.timedOut ? 'timeout' : { placed: t.text, read: ocr.text }, deadlineMs);
    row ??= next;
    if (next.pass)
      return next === row ? next : { ...next, detail: `${next.detail} (at ${linePx} px; at ${OCR_LINE_PX[0]} px: ${row.detail})` };
  }
  // Display type far taller than a line of print (Tesseract misses glyphs 200 px tall that it reads
  // at 100 px): read scaled down to each size in turn.
  if (t.box.h > 1.5 * OCR_LINE_PX[0])
    for (const linePx of OCR_LINE_PX) {
      const png = await ocrImage(frame, t.box, colorsOf(t), linePx, true);
      const ocr = png ? await recognizeText(png, deadlineMs) : { text: '', timedOut: false };
      const next = readBackRow(subject, ocr.timedOut ? 'timeout' : { placed: t.text, read: ocr.text }, deadlineMs);
      if (next.pass) return { ...next, detail: `${next.detail} (scaled down to ${linePx} px; at its own size: ${row!.detail})` };
    }
  return row!;
}

/** The read-back row of a text: what OCR read against what was placed (null: no frame; 'timeout': OCR ran out of time). */
function readBackRow(subject: string, ocr: { placed: string; read: string } | 'timeout' | null, deadlineMs: number): QualityRow {
  const row = { check: 'text-readback' as const, subject, limit: `≥ ${READ_BACK_THRESHOLD}, last word read` };
  if (ocr === null) return { ...row, pass: false, value: 0, detail: 'no frame could be decoded while the text shows' };
  if (ocr === 'timeout') return { ...row, pass: false, value: 0, detail: `OCR ran past its ${deadlineMs} ms deadline` };
  const verdict = readBackVerdict(ocr.placed, ocr.read);
  return {
    ...row,
    pass: verdict.pass,
    value: round(verdict.similarity),
    detail: `read "${ocr.read.replace(/\s+/g, ' ').slice(0, 60)}"${verdict.lastWord ? '' : '; the last word is missing (clipped?)'}`,
  };
}

/** The uncovered-canvas row over sampled frames. */
function canvasRow(frames: { t?: number; frame: Frame }[]): QualityRow {
  const found = frames.flatMap(({ t, frame }) => {
    const bar = uncoveredBar(frame);
    return bar
      ? [
          `${bar.edge} bar of ${round((bar.depth / (bar.edge === 'top' || bar.edge === 'bottom' ? frame.height : frame.width)) * 100, 1)} %${t === undefined ? '' : ` at ${t} s`}`,
        ]
      : [];
  });
  return {
    check: 'uncovered-canvas',
    subject: 'frames',
    pass: found.length === 0,
    value: found.length,
    limit: `0 of ${frames.length} frames`,
    detail: found.length ? found.slice(0, 4).join('; ') : 'no black or transparent bar along an edge',
  };
}

/** The perceptual hash of a frame. */
const hashOf = (f: Frame) => phash(f.data, { raw: { width: f.width, height: f.height, channels: 4 } });

/** The scene-distinct row over frames of consecutive scenes. */
async function sceneRow(frames: Frame[], what: string): Promise<QualityRow> {
  const hashes = await Promise.all(frames.map(hashOf));
  const distances = hashes.slice(1).map((h, i) => hashDistance(hashes[i], h));
  const alike = distances.flatMap((d, i) => (d < LIMITS.sceneBits ? [`${what} ${i + 1}→${i + 2}: ${d} bits`] : []));
  return {
    check: 'scene-distinct',
    subject: `${frames.length} ${what}`,
    pass: alike.length === 0,
    value: distances.length ? Math.min(...distances) : 'n/a',
    limit: `≥ ${LIMITS.sceneBits} of 64 bits`,
    detail: alike.length ? `alike: ${alike.slice(0, 4).join('; ')}` : `distances ${distances.join(', ')}`,
  };
}

/** Scene distinctness over a list of images (slides), in order. */
export async function checkSlides(files: (string | Buffer)[]): Promise<QualityRow> {
  return sceneRow(await Promise.all(files.map((f) => decodeFrame(f, 720))), 'slides');
}

/** Total length of the union of spans inside [0, end]. */
function coveredSeconds(spans: { fromSeconds: number; toSeconds: number }[], end: number): number {
  const s = spans.map((x) => [Math.max(0, x.fromSeconds), Math.min(end, x.toSeconds)]).filter(([a, b]) => b > a);
  s.sort((a, b) => a[0] - b[0]);
  let total = 0;
  let reach = 0;
  for (const [a, b] of s) {
    if (b <= reach) continue;
    total += b - Math.max(a, reach);
    reach = b;
  }
  return total;
}

/** The narration rows: coverage of the requested length, and the tail after the last word. */
function narrationRows(
  spans: { fromSeconds: number; toSeconds: number }[],
  target: number,
  duration: number,
  source: string,
): QualityRow[] {
  const coverage = target > 0 ? coveredSeconds(spans, target) / target : 0;
  const lastEnd = Math.max(0, ...spans.map((s) => s.toSeconds));
  const tail = Math.max(0, duration - lastEnd);
  return [
    {
      check: 'narration-coverage',
      subject: 'audio',
      pass: coverage >= LIMITS.coverage,
      value: pct(coverage),
      limit: `≥ ${pct(LIMITS.coverage)} of ${round(target)} s`,
      detail: `${round(coveredSeconds(spans, target))} s spoken (${source})`,
    },
    {
      check: 'narration-tail',
      subject: 'audio',
      pass: tail <= LIMITS.tailSeconds,
      value: round(tail),
      limit: `≤ ${LIMITS.tailSeconds} s`,
      detail: spans.length ? `the last words end at ${round(lastEnd)} s of ${round(duration)} s` : 'no narration at all',
    },
  ];
}

/** The audio rows: a silent track, and narration when expected. */
async function audioRows(
  media: MediaFile,
  hasAudio: boolean,
  duration: number,
  manifest: MediaManifest | undefined,
  o: Required<Pick<CheckOptions, 'expectNarration'>> & { signal: () => AbortSignal },
): Promise<QualityRow[]> {
  const rows: QualityRow[] = [];
  const measured = hasAudio ? await measureAudio(media, o.signal()) : undefined;
  rows.push({
    check: 'silent-audio',
    subject: 'audio',
    pass: !measured || measured.peakDb > LIMITS.silentDb,
    value: measured ? (Number.isFinite(measured.peakDb) ? round(measured.peakDb, 1) : '-inf') : 'no audio stream',
    limit: `peak > ${LIMITS.silentDb} dBFS`,
    detail: measured ? (measured.peakDb > LIMITS.silentDb ? 'the track has sound' : 'a silent audio track') : 'no audio stream (allowed)',
  });
  if (manifest?.narration)
    rows.push(
      ...narrationRows(
        hasAudio ? manifest.narration : [],
        manifest.requestedSeconds ?? duration,
        duration,
        hasAudio ? 'manifest narration spans' : 'the manifest lists narration, the file has no audio stream',
      ),
    );
  else if (o.expectNarration)
    rows.push(...narrationRows(measured?.speech ?? [], manifest?.requestedSeconds ?? duration, duration, 'speech heard in the voice band'));
  return rows;
}

/** The frames the checks look at: each measured text's, the sampled ones, one per scene. */
interface Frames {
  frameOf: (t: PlacedText) => Frame | undefined;
  sampled: { t?: number; frame: Frame }[];
  scenes: Frame[];
}

/** Decodes the image, or reads the video's frames in one ffmpeg pass (./sample.ts). */
async function framesOf(
  media: MediaFile,
  info: ProbeResult,
  texts: PlacedText[],
  measured: Set<number>,
  manifest: MediaManifest | undefined,
  opts: CheckOptions & { signal: AbortSignal },
): Promise<Frames> {
  if (media.type.startsWith('image/')) {
    const full = await decodeFrame(media.path);
    return { frameOf: () => full, sampled: [{ frame: await decodeFrame(media.path, 720) }], scenes: [] };
  }
  if (!info.has_video) return { frameOf: () => undefined, sampled: [], scenes: [] };
  const duration = info.duration_seconds ?? 0;
  const fromManifest = (manifest?.sceneStarts?.length ?? 0) >= 2;
  const mids = fromManifest ? sceneMids(manifest?.sceneStarts ?? [], duration) : [];
  const textTimes = texts.flatMap((t, i) => (measured.has(i) ? [textTime(t, duration)] : []));
  const s = await sampleVideo(media, [...textTimes, ...mids], {
    duration,
    fps: info.fps ?? 25,
    evenCount: opts.maxSamples ?? 16,
    detectCuts: !fromManifest,
    signal: opts.signal,
  });
  const nearest = (t: number) => s.even.reduce((a, b) => (Math.abs(b.t - t) < Math.abs(a.t - t) ? b : a)).frame;
  const scenes = fromManifest
    ? mids.map((t) => s.at.get(t)).filter((f): f is Frame => f !== undefined)
    : s.even.length
      ? sceneMids([0, ...s.cuts], duration).map(nearest)
      : [];
  return { frameOf: (t) => s.at.get(textTime(t, duration)), sampled: s.even, scenes };
}

/** Checks one media file (see the head of this file). */
export async function checkMedia(file: string, manifest?: MediaManifest, opts: CheckOptions = {}): Promise<QualityReport> {
  const ffmpegSignal = () => AbortSignal.any([AbortSignal.timeout(opts.ffmpegDeadlineMs ?? 90_000), ...(opts.signal ? [opts.signal] : [])]);
  const media = await sniffFile(file);
  const info = await probe(media, { signal: ffmpegSignal() });
  const kind = media.type.startsWith('image/') ? 'image' : info.has_video ? 'video' : 'audio';
  const duration = info.duration_seconds ?? 0;
  const rows: QualityRow[] = [];
  const [width, height] = [info.width ?? 0, info.height ?? 0];
  const texts = kind === 'audio' ? [] : scaledTexts(manifest, width, height, rows);
  const measured = pickEvenly(texts.length, opts.maxTexts ?? 24);
  const frames = await framesOf(media, info, texts, measured, manifest, { ...opts, signal: ffmpegSignal() });
  opts.signal?.throwIfAborted();
  if (manifest) {
    const context = {
      width,
      height,
      manifest,
      frameOf: frames.frameOf,
      measured,
      textCount: texts.length,
      ocrDeadlineMs: opts.ocrDeadlineMs ?? 8000,
    };
    for (const [i, t] of texts.entries()) rows.push(...(await textRows(t, i, context)));
  }
  if (frames.sampled.length) rows.push(canvasRow(frames.sampled));
  if (frames.scenes.length >= 2) rows.push(await sceneRow(frames.scenes, 'scenes'));
  if (kind !== 'image')
    rows.push(
      ...(await audioRows(media, info.has_audio, duration, manifest, { expectNarration: !!opts.expectNarration, signal: ffmpegSignal })),
    );
  const durationSeconds = kind === 'image' ? null : info.duration_seconds;
  return {
    file,
    kind,
    manifest: !!manifest,
    width: info.width,
    height: info.height,
    durationSeconds,
    pass: rows.every((r) => r.pass),
    rows,
  };
}

/** The report as a table: one line per row, PASS or FAIL, value against limit, then the detail. */
export function formatReport(report: QualityReport): string {
  const head = `${report.file} (${report.kind}${report.width ? `, ${report.width}×${report.height}` : ''}${report.durationSeconds ? `, ${round(report.durationSeconds)} s` : ''}): ${report.pass ? 'PASS' : 'FAIL'}`;
  const cells = report.rows.map((r) => [r.pass ? 'pass' : 'FAIL', r.check, r.subject, String(r.value), r.limit, r.detail]);
  const header = ['result', 'check', 'subject', 'value', 'limit', 'detail'];
  const widths = header.map((h, i) => Math.min(i === 5 ? 200 : 40, Math.max(h.length, ...cells.map((c) => c[i].length))));
  const line = (c: string[]) =>
    c
      .map((v, i) => (i === 5 ? v : (v.length > widths[i] ? `${v.slice(0, widths[i] - 1)}…` : v).padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const note = report.manifest ? [] : ['(no manifest: the placed-text checks did not run)'];
  return [head, ...note, line(header), ...cells.map(line)].join('\n');
}
