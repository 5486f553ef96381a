// OCR for reference analysis and the media quality checker: tesseract.js (Tesseract compiled to
// WebAssembly, in a worker thread) with the LSTM models shipped as npm packages
// (@tesseract.js-data/eng, spa and deu, 4.0.0_best_int). Nothing downloads at run time: the
// models are read from those packages' folders, cacheMethod 'none' (no writes to a cache either),
// the core comes from node_modules. A text is read with the model of its language (English,
// Spanish, German) besides the English one; other languages are read with English alone. One
// worker per language set, created on first use and reused (loading a model costs about a
// second); stopOcr() ends them at shutdown. Each call has a deadline: a recognition still running
// then is abandoned (the worker is terminated and recreated on the next call) and the call
// resolves with no text.
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { createWorker, OEM, type Worker } from 'tesseract.js';

const require = createRequire(import.meta.url);
/** The folder of a bundled model (`<code>.traineddata.gz`). */
const modelFolder = (code: string) => path.join(path.dirname(require.resolve(`@tesseract.js-data/${code}/package.json`)), '4.0.0_best_int');

/** Tesseract's code of each language (ISO 639-1) whose model is bundled. */
export const OCR_MODELS: Readonly<Record<string, string>> = { en: 'eng', es: 'spa', de: 'deu' };

/**
 * The Tesseract language set a text in `language` (ISO 639-1, or a locale such as es-MX) is read
 * with: its own model first, then English (brand names, loanwords); English alone for English and
 * for languages without a bundled model.
 */
export function ocrLanguages(language?: string): string {
  const own = OCR_MODELS[(language ?? '').trim().toLowerCase().slice(0, 2)];
  return own && own !== 'eng' ? `${own}+eng` : 'eng';
}

/** Whether texts in `language` are read with a model of their own (its letters, é ñ ü ß, read as such). */
export const hasOwnModel = (language?: string): boolean => ocrLanguages(language) !== 'eng';

export interface OcrBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface OcrResult {
  /** The words read with enough confidence, a line per text line; '' when none. */
  text: string;
  /** The lines those words are on, in pixels of the image given. */
  lines: OcrBox[];
  /** True when the deadline cut the recognition short (text and lines are then empty). */
  timedOut: boolean;
}

/** Words below this confidence (0–100) are noise (photos give Tesseract plenty of it). */
const MIN_WORD_CONFIDENCE = 60;
/**
 * Read with the English model alone, a word with a letter outside ASCII (é, ü, ñ) passes at this
 * confidence: that model reads "café" right but at about 50 at some sizes, so the stricter bar
 * dropped correctly read words of languages it has no model for (French, Portuguese, Italian). A
 * language's own model reads its letters at full confidence (Spanish and German at 96): no
 * leniency then.
 */
const MIN_ACCENTED_WORD_CONFIDENCE = 40;

/** Whether a word read is kept (enough confidence, at least one letter or digit); `langs`: the set it was read with. */
export function keptWord(text: string, confidence: number, langs = 'eng'): boolean {
  if (!/[\p{L}\p{N}]/u.test(text)) return false;
  const lenient = langs === 'eng' && /[^\x00-\x7f]/.test(text);
  return confidence >= (lenient ? MIN_ACCENTED_WORD_CONFIDENCE : MIN_WORD_CONFIDENCE);
}

const workers = new Map<string, Promise<Worker>>();
/** Recognitions run one at a time (one worker thread busy at once); this chains them. */
let queue: Promise<unknown> = Promise.resolve();

/**
 * tesseract.js reads every model of a set from one folder: a set of several gets a folder of links
 * to the bundled files, removed once the worker has loaded them.
 */
async function withModelFolder<T>(langs: string, fn: (langPath: string) => Promise<T>): Promise<T> {
  const codes = langs.split('+');
  if (codes.length === 1) return fn(modelFolder(codes[0]));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ocr-models-'));
  try {
    for (const code of codes)
      await symlink(path.join(modelFolder(code), `${code}.traineddata.gz`), path.join(dir, `${code}.traineddata.gz`));
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function getWorker(langs: string): Promise<Worker> {
  let worker = workers.get(langs);
  if (worker) return worker;
  worker = withModelFolder(langs, (langPath) =>
    createWorker(langs, OEM.LSTM_ONLY, { langPath, cacheMethod: 'none', gzip: true, logger: () => {} }),
  )
    .then(async (w) => {
      // Our images carry no resolution; say so instead of letting Tesseract warn on every call.
      await w.setParameters({ user_defined_dpi: '72' });
      return w;
    })
    .catch((err) => {
      workers.delete(langs);
      throw err;
    });
  workers.set(langs, worker);
  return worker;
}

async function dropWorker(langs: string): Promise<void> {
  const w = workers.get(langs);
  workers.delete(langs);
  if (w) await (await w.catch(() => undefined))?.terminate().catch(() => {});
}

/** Ends the process's OCR workers (shutdown); a later call starts new ones. */
export async function stopOcr(): Promise<void> {
  await Promise.all([...workers.keys()].map(dropWorker));
}

/**
 * Reads the text of an image (PNG/JPEG bytes this code produced), within `deadlineMs`, with the
 * models of `language` (ISO 639-1; see ocrLanguages; default English).
 */
export function recognizeText(image: Buffer, deadlineMs: number, language?: string): Promise<OcrResult> {
  const run = queue.then(() => recognizeNow(image, deadlineMs, ocrLanguages(language)));
  queue = run.catch(() => {});
  return run;
}

async function recognizeNow(image: Buffer, deadlineMs: number, langs: string): Promise<OcrResult> {
  const w = await getWorker(langs);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), deadlineMs);
  });
  try {
    const job = w.recognize(image, {}, { text: false, blocks: true });
    // Past the deadline the worker is terminated under it: that rejection has no one to hear it.
    job.catch(() => {});
    const result = await Promise.race([job, deadline]);
    if (result === 'timeout') {
      await dropWorker(langs);
      return { text: '', lines: [], timedOut: true };
    }
    const lines: OcrBox[] = [];
    const textLines: string[] = [];
    for (const block of result.data.blocks ?? []) {
      for (const para of block.paragraphs) {
        for (const line of para.lines) {
          const words = line.words.filter((wd) => keptWord(wd.text, wd.confidence, langs));
          if (!words.length) continue;
          textLines.push(words.map((wd) => wd.text).join(' '));
          const x0 = Math.min(...words.map((wd) => wd.bbox.x0));
          const y0 = Math.min(...words.map((wd) => wd.bbox.y0));
          const x1 = Math.max(...words.map((wd) => wd.bbox.x1));
          const y1 = Math.max(...words.map((wd) => wd.bbox.y1));
          lines.push({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 });
        }
      }
    }
    return { text: textLines.join('\n'), lines, timedOut: false };
  } finally {
    clearTimeout(timer);
  }
}
