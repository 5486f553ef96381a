// OCR for reference analysis: tesseract.js (Tesseract compiled to WebAssembly, in a worker thread)
// with the English LSTM model shipped as an npm package (@tesseract.js-data/eng, 4.0.0_best_int).
// Nothing downloads at run time: langPath is that package's folder, cacheMethod 'none' (no
// writes to a cache either), the core comes from node_modules. One worker per process, created on
// first use and reused (loading the model costs about a second); stopOcr() ends it at shutdown.
// Each call has a deadline: a recognition still running then is abandoned (the worker is
// terminated and recreated on the next call) and the call resolves with no text.
import { createRequire } from 'node:module';
import path from 'node:path';
import { createWorker, OEM, type Worker } from 'tesseract.js';

const require = createRequire(import.meta.url);
const LANG_PATH = path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');

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
 * A word with a letter outside ASCII (é, ü, ñ) passes at this confidence: the English model reads
 * "café" right but at about 50, so the stricter bar dropped correctly read words of other languages.
 */
const MIN_ACCENTED_WORD_CONFIDENCE = 40;

/** Whether a word read is kept (enough confidence, at least one letter or digit). */
export function keptWord(text: string, confidence: number): boolean {
  if (!/[\p{L}\p{N}]/u.test(text)) return false;
  return confidence >= (/[^\x00-\x7f]/.test(text) ? MIN_ACCENTED_WORD_CONFIDENCE : MIN_WORD_CONFIDENCE);
}

let worker: Promise<Worker> | undefined;
/** Recognitions run one at a time on the one worker; this chains them. */
let queue: Promise<unknown> = Promise.resolve();

function getWorker(): Promise<Worker> {
  worker ??= createWorker('eng', OEM.LSTM_ONLY, { langPath: LANG_PATH, cacheMethod: 'none', gzip: true, logger: () => {} })
    .then(async (w) => {
      // Our images carry no resolution; say so instead of letting Tesseract warn on every call.
      await w.setParameters({ user_defined_dpi: '72' });
      return w;
    })
    .catch((err) => {
      worker = undefined;
      throw err;
    });
  return worker;
}

async function dropWorker(): Promise<void> {
  const w = worker;
  worker = undefined;
  if (w) await (await w.catch(() => undefined))?.terminate().catch(() => {});
}

/** Ends the process's OCR worker (shutdown); a later call starts a new one. */
export async function stopOcr(): Promise<void> {
  await dropWorker();
}

/** Reads the text of an image (PNG/JPEG bytes this code produced), within `deadlineMs`. */
export function recognizeText(image: Buffer, deadlineMs: number): Promise<OcrResult> {
  const run = queue.then(() => recognizeNow(image, deadlineMs));
  queue = run.catch(() => {});
  return run;
}

async function recognizeNow(image: Buffer, deadlineMs: number): Promise<OcrResult> {
  const w = await getWorker();
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
      await dropWorker();
      return { text: '', lines: [], timedOut: true };
    }
    const lines: OcrBox[] = [];
    const textLines: string[] = [];
    for (const block of result.data.blocks ?? []) {
      for (const para of block.paragraphs) {
        for (const line of para.lines) {
          const words = line.words.filter((wd) => keptWord(wd.text, wd.confidence));
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
