// The local copy writer: offline and deterministic (the same request gives the same words). It
// frames the user's own sentences with template phrases of the requested language (hook, "here's
// why", call to action…) and fills out with generic sentences about the brief's subject when the
// brief is too short for the requested length. Scripts are sized in words to targetSeconds ×
// wordsPerSecond (within a few words, except below the shortest possible script, 15 words); slide
// copy puts the product context's facts first, one or more per body slide.
import { languagePack, PACKS, type LanguagePack } from './languages.ts';
import {
  WriterFailed,
  type Script,
  type ScriptRequest,
  type SlideCopy,
  type SlideCopyRequest,
  type SlideText,
  type Writer,
} from './types.ts';

/** Characters of a brief or product context the writer reads; the rest is ignored. */
export const MAX_INPUT_CHARS = 20_000;
/** Longest script the local writer writes, in words (about ten minutes of narration). */
export const MAX_SCRIPT_WORDS = 1800;
/** Fewest words per part (hook, each beat, call to action). */
const MIN_PART_WORDS = 3;
export const HEADING_MAX = 60;
export const BODY_MAX = 200;
export const TITLE_MAX = 100;
/** Most slides the writer makes (the API allows 3–10). */
export const MAX_SLIDES = 20;
const TOPIC_MAX_WORDS = 8;
const SCENE_KINDS = ['close-up', 'wide shot', 'detail shot', 'overhead shot', 'tracking shot', 'portrait shot', 'establishing shot'];

/** Words of a text: whitespace-separated tokens holding at least one letter or digit. */
export function countWords(text: string): number {
  let n = 0;
  for (const w of text.split(/\s+/)) if (/[\p{L}\p{N}]/u.test(w)) n++;
  return n;
}

/** `text` cut at a word boundary to at most `max` characters, with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const t = text.trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:–—-]+$/u, '')}…`;
}

function clean(text: string): string {
  return text
    .slice(0, MAX_INPUT_CHARS)
    .replace(/[\p{Cc}\p{Cf}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Sentences and, for long ones, clauses of a text, each at most `maxWords` words. */
export function clauses(text: string, maxWords = 24): string[] {
  const out: string[] = [];
  const sentences = clean(text).match(/[^.!?।。]+(?:[.!?।。]+|$)/gu) ?? [];
  for (const raw of sentences) {
    const s = raw.trim();
    if (!/[\p{L}\p{N}]/u.test(s)) continue;
    const parts = countWords(s) <= maxWords ? [s] : s.split(/(?<=[,;:])\s+/u);
    for (const p of parts) {
      const words = p.split(' ');
      for (let i = 0; i < words.length; i += maxWords) {
        const chunk = words
          .slice(i, i + maxWords)
          .join(' ')
          .trim();
        if (/[\p{L}\p{N}]/u.test(chunk)) out.push(chunk);
      }
    }
    if (out.length >= 400) break;
  }
  return out;
}

function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

function stripEnd(text: string): string {
  return text.replace(/[\s.!?।。,;:–—-]+$/u, '');
}

/** Whether a sentence is an instruction naming its subject ("a video about X"): where X starts, or -1. */
function aboutAt(pack: LanguagePack, sentence: string): { at: number; word: string } | undefined {
  const lower = sentence.toLowerCase();
  let best: { at: number; word: string } | undefined;
  for (const word of [...pack.about, ...PACKS.en.about]) {
    const m = new RegExp(`(?:^|\\s)(${word})\\s`, 'u').exec(lower);
    if (m && (!best || m.index < best.at)) best = { at: m.index + m[0].indexOf(m[1]), word };
  }
  return best;
}

interface Brief {
  /** The subject, at most 8 words, as the user wrote it. */
  topic: string;
  /** The user's sentences to narrate (the instruction sentence and a bare subject left out). */
  content: string[];
}

/** The brief's subject (the title, or what follows "about" in its first sentence) and its content sentences. */
function readBrief(pack: LanguagePack, prompt: string, title: string | undefined, maxWords: number): Brief {
  const all = clauses(prompt, maxWords);
  const first = all[0] ?? '';
  const about = aboutAt(pack, first);
  let subject = stripEnd(title?.trim() ? (clauses(title)[0] ?? '') : first);
  if (!title?.trim() && about) {
    const rest = stripEnd(first.slice(about.at + about.word.length));
    if (/[\p{L}\p{N}]/u.test(rest)) subject = rest;
  }
  const topic = stripEnd(subject.split(' ').filter(Boolean).slice(0, TOPIC_MAX_WORDS).join(' ')) || '…';
  // The first sentence is narration unless it is the instruction ("… about X") or just the subject.
  const firstIsContent = first && !about && stripEnd(first) !== topic;
  const content = (firstIsContent ? all : all.slice(1)).map((c) => (/[.!?।。]$/u.test(c) ? c : `${c}${pack.stop}`));
  return { topic, content };
}

function fill(template: string, topic: string): string {
  return template.replaceAll('{topic}', topic);
}

/** The first `n` words of a sentence, ended as a sentence. */
function shorten(pack: LanguagePack, sentence: string, n: number): string {
  const words = sentence.split(' ').filter(Boolean);
  let kept = 0;
  const out: string[] = [];
  for (const w of words) {
    if (kept >= n) break;
    out.push(w);
    if (/[\p{L}\p{N}]/u.test(w)) kept++;
  }
  if (out.length === words.length) return sentence;
  return `${stripEnd(out.join(' '))}${pack.stop}`;
}

/**
 * One part of `budget` words: its lead sentences, then the user's sentences (one that does not fit
 * waits for the next part, in `rest`, unless it alone is longer than a part: then it is shortened),
 * then whole filler sentences that fit (each once, or twice with `repeat`). `shortenFiller` lets
 * one more filler be shortened to close a gap of three words or more.
 */
function compose(
  pack: LanguagePack,
  lead: string[],
  mine: string[],
  fillers: string[],
  budget: number,
  opts: { repeat?: boolean; shortenFiller?: boolean } = {},
): { text: string; words: number; rest: string[] } {
  const out: string[] = [];
  let words = 0;
  const add = (s: string, n: number) => {
    out.push(s);
    words += n;
  };
  for (const s of lead) {
    const w = countWords(s);
    if (w && (words + w <= budget || out.length === 0)) add(s, w);
  }
  let taken = 0;
  for (const s of mine) {
    const w = countWords(s);
    const room = budget - words;
    if (w <= room) add(s, w);
    else if (taken === 0 && room >= MIN_PART_WORDS) add(shorten(pack, s, room), room);
    else break;
    taken++;
  }
  for (let pass = 0; pass < (opts.repeat ? 2 : 1) && words < budget; pass++) {
    for (const f of fillers) {
      const w = countWords(f);
      if (w && w <= budget - words) add(f, w);
      if (words >= budget) break;
    }
  }
  if (opts.shortenFiller && budget - words >= MIN_PART_WORDS && fillers.length) {
    const room = budget - words;
    const f = fillers.find((x) => !out.includes(x)) ?? fillers[0];
    add(shorten(pack, f, room), room);
  }
  if (out.length === 0) add(shorten(pack, fillers[0] ?? '…', Math.max(1, budget)), Math.max(1, budget));
  return { text: out.join(' '), words, rest: mine.slice(taken) };
}

function sceneOf(text: string, styles: string[], index: number): string {
  const style = styles.length ? styles.join(', ') : 'clean, bright';
  const keywords = stripEnd(text)
    .split(' ')
    .filter((w) => /[\p{L}\p{N}]/u.test(w))
    .slice(0, 10)
    .join(' ');
  return clip(`${style} ${SCENE_KINDS[index % SCENE_KINDS.length]}: ${keywords}`, 200);
}

function packFor(language: string): LanguagePack {
  const pack = languagePack(language);
  if (!pack) throw new WriterFailed(`the local writer cannot write in "${clip(language, 40)}"`, { retryable: false });
  return pack;
}

function titleOf(title: string | undefined, topic: string): string {
  const t = clip(clean(title ?? ''), TITLE_MAX);
  return t || clip(topic.charAt(0).toUpperCase() + topic.slice(1), TITLE_MAX);
}

export function writeLocalScript(req: ScriptRequest): Script {
  const pack = packFor(req.language);
  const seconds = Number.isFinite(req.targetSeconds) && req.targetSeconds > 0 ? req.targetSeconds : 26;
  const pace = Number.isFinite(req.wordsPerSecond) && req.wordsPerSecond > 0 ? req.wordsPerSecond : 2.5;
  const target = Math.min(MAX_SCRIPT_WORDS, Math.max(5 * MIN_PART_WORDS, Math.round(seconds * pace)));
  const beatCount = target < 50 ? 3 : target < 110 ? 4 : 5;
  const hookBudget = Math.max(MIN_PART_WORDS, Math.round(target * 0.15));
  const ctaBudget = Math.max(MIN_PART_WORDS, Math.round(target * 0.12));
  const beatsTotal = target - hookBudget - ctaBudget;
  const beatBudgets = Array.from({ length: beatCount }, (_, j) =>
    Math.max(MIN_PART_WORDS, Math.floor(((j + 1) * beatsTotal) / beatCount) - Math.floor((j * beatsTotal) / beatCount)),
  );

  const { topic, content } = readBrief(pack, req.prompt, req.title, 24);
  const h = hash(`${req.prompt}\u0000${req.title ?? ''}`);
  const fillers = pack.fillers.map((f) => fill(f, topic));

  const hook = compose(pack, [fill(pack.hooks[h % pack.hooks.length], topic)], [], pack.hookExtra, hookBudget);
  const cta = compose(pack, [fill(pack.cta, topic)], [], pack.ctaExtra, ctaBudget);
  // What the hook and call to action left unsaid goes to the beats; the last beat closes the gap.
  let carry = hookBudget - hook.words + ctaBudget - cta.words;
  let waiting: string[] = [];
  const beats: string[] = [];
  const sceneTexts: string[] = [];
  beatBudgets.forEach((budget, j) => {
    const last = j === beatCount - 1;
    const lead = [pack.leads[j === 0 ? 0 : last ? 4 : j]];
    const mine = [
      ...waiting,
      ...content.slice(Math.ceil((j * content.length) / beatCount), Math.ceil(((j + 1) * content.length) / beatCount)),
    ];
    const rotated = fillers.map((_, i) => fillers[(i + j * 3 + h) % fillers.length]);
    let part = compose(pack, lead, mine, rotated, budget + carry, { repeat: true });
    if (last && budget + carry - part.words > 0.08 * target)
      part = compose(pack, lead, mine, rotated, budget + carry, { repeat: true, shortenFiller: true });
    carry = budget + carry - part.words;
    waiting = part.rest;
    beats.push(part.text);
    sceneTexts.push(mine[0] ?? topic);
  });
  const styles = (req.styles ?? [])
    .map((s) => clean(s))
    .filter(Boolean)
    .slice(0, 5);
  return {
    title: titleOf(req.title, topic),
    language: pack.code,
    hook: hook.text,
    beats,
    callToAction: cta.text,
    scenes: [topic, ...sceneTexts, topic].map((text, i) => sceneOf(text, styles, i)),
  };
}

/** Texts joined while they fit in `max` characters (the first one clipped when alone it does not). */
function pack200(texts: string[], max = BODY_MAX): string {
  let out = '';
  for (const t of texts) {
    const next = out ? `${out} ${t}` : t;
    if (next.length <= max) out = next;
    else if (!out) return clip(t, max);
    else break;
  }
  return out;
}

export function writeLocalSlides(req: SlideCopyRequest): SlideCopy {
  const pack = packFor(req.language);
  const count = Math.trunc(req.slideCount);
  if (!(count >= 2 && count <= MAX_SLIDES))
    throw new WriterFailed(`slide count must be 2–${MAX_SLIDES}, got ${req.slideCount}`, { retryable: false });
  const { topic, content: briefs } = readBrief(pack, req.prompt, req.title, 30);
  const facts = clauses(req.productContext ?? '', 30);
  const bodies = count - 2;
  const groups: string[][] = Array.from({ length: bodies }, () => []);
  if (facts.length >= bodies) {
    facts.forEach((f, i) => {
      groups[Math.floor((i * bodies) / facts.length)].push(f);
    });
  } else {
    facts.forEach((f, i) => {
      groups[i].push(f);
    });
    const free = bodies - facts.length;
    const used = briefs.slice(0, free * 8);
    used.forEach((b, i) => {
      groups[facts.length + Math.floor((i * free) / used.length)].push(b);
    });
  }
  const h = hash(`${req.prompt}\u0000${req.title ?? ''}`);
  const slides: SlideText[] = [{ role: 'hook', heading: clip(titleOf(req.title, topic), HEADING_MAX), body: pack.slideHook }];
  groups.forEach((g, i) => {
    const body = g.length ? pack200(g) : fill(pack.fillers[(h + i * 5) % pack.fillers.length], clip(topic, 80));
    slides.push({ role: 'body', heading: pack.slideHeadings[i % pack.slideHeadings.length], body: clip(body, BODY_MAX) });
  });
  const short = clip(topic, HEADING_MAX - pack.slideCtaHeading.replace('{topic}', '').length);
  slides.push({ role: 'cta', heading: clip(fill(pack.slideCtaHeading, short), HEADING_MAX), body: pack.slideCtaBody });
  return { title: titleOf(req.title, topic), language: pack.code, slides };
}

export function createLocalWriter(): Writer {
  return {
    name: 'local',
    async writeScript(req, signal) {
      signal?.throwIfAborted();
      return writeLocalScript(req);
    },
    async writeSlides(req, signal) {
      signal?.throwIfAborted();
      return writeLocalSlides(req);
    },
  };
}
