// The local copy writer: offline and deterministic (the same request gives the same words). It
// reads the brief (./brief.ts: its subject as a noun phrase, its claim, the list it announces, its
// sentences) and frames the user's own sentences with template phrases of the requested language
// (hook, "here's why", call to action…), filling out with generic sentences about the subject when
// the brief is too short for the requested length. Whole sentences only: a user's sentence is never
// cut, the subject goes into templates as a noun phrase, and a script that announces a count has
// exactly that many numbered items. Scripts are sized in words to targetSeconds × wordsPerSecond
// (a very short one may run over by a sentence); slide copy puts the product context's facts and
// the brief's sentences first, one or more per body slide, and no two body slides say the same.
import { itemTitle, midSentence, type ReadBrief, readBriefText, sceneTitle } from './brief.ts';
import { BRIEF_WORDS, languagePack, PACKS, type LanguagePack } from './languages.ts';
import { writePresenterScript } from './presenter.ts';
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
/** Below this many words a script is a few seconds long: its beats are the shortest sentences. */
const SHORT_SCRIPT_WORDS = 30;
/** Fewest words per part (hook, each beat, call to action). */
const MIN_PART_WORDS = 3;
export const HEADING_MAX = 60;
export const BODY_MAX = 200;
export const TITLE_MAX = 100;
/** Most slides the writer makes (the API allows 3–10). */
export const MAX_SLIDES = 20;
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

/** The brief read (./brief.ts): its sentences are clauses of at most `maxWords` words. */
function readBrief(pack: LanguagePack, prompt: string, title: string | undefined, maxWords: number): ReadBrief {
  return readBriefText(pack, clauses(prompt, maxWords), title, (s) => aboutAt(pack, s));
}

/** Articles contracted after a preposition, as the language writes them ("a el" → "al"). */
const CONTRACTIONS: Record<string, [RegExp, string][]> = {
  es: [
    [/\b([aA]) el\b/g, '$1l'],
    [/\b([dD])e el\b/g, '$1el'],
  ],
  fr: [
    [/\b([dD])e le\b/g, '$1u'],
    [/\b([dD])e les\b/g, '$1es'],
    [/\b([àÀ]) le\b/g, 'au'],
    [/\b([àÀ]) les\b/g, 'aux'],
  ],
  pt: [
    [/\bem o\b/g, 'no'],
    [/\bem a\b/g, 'na'],
    [/\bde o\b/g, 'do'],
    [/\bde a\b/g, 'da'],
  ],
  it: [
    [/\bdi il\b/g, 'del'],
    [/\bsu il\b/g, 'sul'],
  ],
};

function fill(template: string, topic: string, code = ''): string {
  let out = template.replaceAll('{topic}', topic);
  for (const [re, to] of CONTRACTIONS[code] ?? []) out = out.replace(re, to);
  return out;
}

const sentenceCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Filler sentences handed out in turn: each once before any is said again. */
class Fillers {
  private next = 0;
  private readonly list: string[];
  constructor(list: string[]) {
    this.list = list;
  }
  /** Words of the shortest filler. */
  get shortest(): number {
    return Math.min(...this.list.map(countWords));
  }
  /** The shortest filler not said yet (else the shortest), said now. */
  takeShortest(): string | undefined {
    const unsaid = this.list.slice(this.next);
    const pool = unsaid.length ? unsaid : this.list;
    const f = pool.reduce<string | undefined>((best, x) => (best === undefined || countWords(x) < countWords(best) ? x : best), undefined);
    if (f !== undefined && unsaid.length) {
      // Said: moved before the ones still waiting, so it is not said twice before the others.
      const i = this.list.indexOf(f, this.next);
      this.list.splice(i, 1);
      this.list.splice(this.next, 0, f);
      this.next++;
    }
    return f;
  }
  /** The next filler of at most `room` words (a repeat only once every one was said), or undefined. */
  take(room: number, allowRepeat: boolean): string | undefined {
    // Once every filler was said they go round again (with allowRepeat), never before.
    if (this.next >= this.list.length && allowRepeat) this.next = 0;
    for (let i = this.next; i < this.list.length; i++) {
      const f = this.list[i];
      if (countWords(f) <= room) {
        // Said: moved before the ones still waiting.
        this.list.splice(i, 1);
        this.list.splice(this.next, 0, f);
        this.next++;
        return f;
      }
    }
    return undefined;
  }
}

/**
 * One part of about `budget` words, in whole sentences only: its lead, the user's sentences that
 * fit (one that does not waits for the next part, in `rest`), then fillers. `atLeastOne`: a part never ends at its lead (an item is always said).
 */
function compose(
  lead: string[],
  mine: string[],
  fillers: Fillers | undefined,
  budget: number,
  opts: { repeat?: boolean; atLeastOne?: boolean } = {},
): { text: string; words: number; rest: string[]; said: string[] } {
  const out: string[] = [...lead];
  let words = lead.reduce((n, s) => n + countWords(s), 0);
  const leadCount = out.length;
  let taken = 0;
  for (const s of mine) {
    const w = countWords(s);
    // Whole sentences only: one that does not fit (a quarter over at most) waits for the next part.
    if (words + w > budget * 1.25) break;
    out.push(s);
    words += w;
    taken++;
  }
  let rest = mine.slice(taken);
  if (opts.atLeastOne && out.length === leadCount && rest.length && fillers) {
    // Nothing fitted: the shortest of the user's sentences left, unless a filler is shorter.
    const shortest = rest.reduce((a, b) => (countWords(b) < countWords(a) ? b : a));
    if (countWords(shortest) <= Math.max(fillers.shortest, budget * 1.6)) {
      out.push(shortest);
      words += countWords(shortest);
      rest = rest.filter((x) => x !== shortest);
    }
  }
  for (;;) {
    const room = budget - words;
    const mustSay = Boolean(opts.atLeastOne) && out.length === leadCount;
    const f = mustSay ? fillers?.takeShortest() : room >= MIN_PART_WORDS ? fillers?.take(room, Boolean(opts.repeat)) : undefined;
    if (!f) break;
    out.push(f);
    words += countWords(f);
  }
  return { text: out.join(' '), words, rest, said: out.slice(lead.length) };
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

/** The hook about the subject: one of the pack's, the shortest when the chosen one is well over its budget. */
function hookFor(pack: LanguagePack, topic: string, h: number, budget: number): string {
  const chosen = fill(pack.hooks[h % pack.hooks.length], topic, pack.code);
  if (countWords(chosen) <= budget + MIN_PART_WORDS) return chosen;
  return pack.hooks.map((x) => fill(x, topic, pack.code)).reduce((a, b) => (countWords(b) < countWords(a) ? b : a));
}

/** The script's length in words: targetSeconds × wordsPerSecond, within the writer's bounds. */
function scriptWords(req: ScriptRequest): number {
  const seconds = Number.isFinite(req.targetSeconds) && req.targetSeconds > 0 ? req.targetSeconds : 26;
  const pace = Number.isFinite(req.wordsPerSecond) && req.wordsPerSecond > 0 ? req.wordsPerSecond : 2.5;
  return Math.min(MAX_SCRIPT_WORDS, Math.max(5 * MIN_PART_WORDS, Math.round(seconds * pace)));
}

/** The list a script counts: its items (the brief's facts, as many as it announced at most) and the sentence announcing them. */
interface Counted {
  items: string[];
  /** The count and its noun with what follows ("three reasons why …"), as the hook says it. */
  words: string;
  /** "3 reasons", for the hook's title. */
  short: string;
}

/**
 * The list the script counts: the brief's facts (its colon list, or its sentences under an announced
 * list), never more than it announced; when it gives fewer than two, no list (a count the script
 * cannot deliver is not announced).
 */
function countedList(pack: LanguagePack, brief: ReadBrief): Counted | null {
  const bw = BRIEF_WORDS[pack.code] ?? BRIEF_WORDS.en;
  const n = Math.min(brief.facts.length, brief.list?.count ?? 10, bw.items.length);
  if (n < 2) return null;
  const items = brief.facts.slice(0, n);
  if (brief.list) {
    const said = brief.list.words.split(' ');
    const noun = said.find((w) => bw.listNouns.includes(w.toLowerCase())) ?? bw.listNouns[0];
    return { items, words: [bw.numbers[n], ...said.slice(1)].join(' '), short: `${n} ${noun}` };
  }
  const noun = bw.listNouns[0];
  const about = pack.code === 'en' ? (brief.claim ? ` why ${midSentence(stripEnd(brief.claim), true)}` : ` about ${brief.topic}`) : '';
  return { items, words: `${bw.numbers[n]} ${noun}${about}`, short: `${n} ${noun}` };
}

/** Item `j`'s opening sentence, its number and what it is ("Number three: it keeps you hydrated all day."). */
function itemSentence(pack: LanguagePack, j: number, item: string): string {
  const bw = BRIEF_WORDS[pack.code] ?? BRIEF_WORDS.en;
  const lead = bw.items[j].replace(/[\s.!?।。]+$/u, '');
  return `${lead}: ${midSentence(stripEnd(item), true)}${pack.stop}`;
}

/** The on-screen title of a part: a filler's own title, else a phrase of the first sentence it says. */
function partTitle(said: string[], fallback: string, fillerTitles: Map<string, string>, used: string[]): string {
  const titles = said.map((x) => fillerTitles.get(x) ?? sceneTitle(x));
  // The previous scene's title is not said again.
  return titles.find((x) => !used.includes(x)) ?? titles[0] ?? fallback;
}

/** The call to action's title: its words before the subject ("Follow for more"), else a phrase of it. */
function ctaTitle(pack: LanguagePack, cta: string): string {
  const before = pack.cta.split('{topic}')[0].replace(/[\s,:]*(?:about|sobre|sur|über|su|para|pour|für|per|de|di|à|a|com|con)?\s*$/iu, '');
  return before.split(/\s+/).length >= 2 ? sentenceCase(before) : sceneTitle(cta);
}

/**
 * The filler sentences about the subject, in the order the brief's hash turns them to (a script of
 * a few seconds says short sentences first), and the on-screen title of each that has one.
 */
function scriptFillers(pack: LanguagePack, topic: string, h: number, target: number) {
  const bw = BRIEF_WORDS[pack.code] ?? BRIEF_WORDS.en;
  const fillerTitles = new Map<string, string>();
  const rotated = pack.fillers.map((_, i) => {
    const k = (i + h) % pack.fillers.length;
    const text = fill(pack.fillers[k], topic, pack.code);
    const title = pack.fillerTitles?.[k];
    if (title) fillerTitles.set(text, title);
    return text;
  });
  const short = target < SHORT_SCRIPT_WORDS ? bw.short.map((x) => sentenceCase(fill(x, topic, pack.code))) : [];
  for (const [i, x] of short.entries()) if (bw.shortTitles?.[i]) fillerTitles.set(x, bw.shortTitles[i]);
  return { fillers: new Fillers([...short, ...rotated]), fillerTitles };
}

/**
 * A script in whole sentences: a hook (the list it counts, else a hook about the subject), the
 * beats (one per counted item, opened by its number and what it is; else 3–5 beats), the call to
 * action, and each part's on-screen title. The user's sentences come first, then filler sentences
 * about the subject, each said once before any repeats; the beats share what the hook and call to
 * action leave.
 */
export function writeLocalScript(req: ScriptRequest): Script {
  const pack = packFor(req.language);
  const bw = BRIEF_WORDS[pack.code] ?? BRIEF_WORDS.en;
  const target = scriptWords(req);
  const brief = readBrief(pack, req.prompt, req.title, 24);
  const h = hash(`${req.prompt}\u0000${req.title ?? ''}`);
  const { fillers, fillerTitles } = scriptFillers(pack, brief.topic, h, target);
  const counted = countedList(pack, brief);
  const beatCount = counted?.items.length ?? (target < 50 ? 3 : target < 110 ? 4 : 5);
  const hookBudget = Math.max(MIN_PART_WORDS, Math.round(target * 0.15));
  const ctaBudget = Math.max(MIN_PART_WORDS, Math.round(target * 0.12));
  const hookLead = counted
    ? sentenceCase(bw.listHook.replace('{list}', counted.words))
    : brief.howTo
      ? `Here's ${midSentence(brief.howTo, true)}.`
      : hookFor(pack, brief.topic, h, hookBudget);
  const hook = compose([hookLead], [], new Fillers(pack.hookExtra), hookBudget);
  const ctaLead = fill(pack.cta, brief.topic, pack.code);
  const cta = compose([ctaLead], [], new Fillers(pack.ctaExtra), ctaBudget);
  // A counted list's items are its facts: the brief's other sentences fill around them.
  const content = counted
    ? brief.content.filter((c) => !counted.items.includes(stripEnd(c)))
    : [...(brief.claim ? [brief.claim] : []), ...brief.content];
  const subject = sentenceCase(brief.topic);
  const hookTitle = counted
    ? countWords(`${subject} ${counted.short}`) <= 6
      ? `${subject}: ${counted.short}`
      : sentenceCase(counted.short)
    : brief.howTo
      ? sceneTitle(brief.howTo)
      : brief.claim
        ? sceneTitle(brief.claim)
        : subject;
  const beats: string[] = [];
  const titles: string[] = [];
  const sceneTexts: string[] = [];
  let left = target - hook.words - cta.words;
  let waiting: string[] = [];
  for (let j = 0; j < beatCount; j++) {
    const last = j === beatCount - 1;
    const mine = [
      ...waiting,
      ...content.slice(Math.ceil((j * content.length) / beatCount), Math.ceil(((j + 1) * content.length) / beatCount)),
    ];
    const budget = Math.round(left / (beatCount - j));
    const said = counted ? itemSentence(pack, j, counted.items[j]) : pack.leads[j === 0 ? 0 : last ? 4 : Math.min(j, 3)];
    // A list's items always open their beat; a short beat goes without its lead (but the first).
    const roomy = budget >= countWords(said) + Math.min(fillers.shortest, countWords(mine[0] ?? '') || Infinity);
    const lead = counted || roomy ? [said] : [];
    const part = compose(lead, mine, fillers, last ? left : budget, { repeat: true, atLeastOne: !counted });
    left -= part.words;
    waiting = part.rest;
    beats.push(part.text);
    titles.push(
      counted
        ? `${String(j + 1).padStart(2, '0')} · ${itemTitle(counted.items[j])}`
        : partTitle(part.said, sentenceCase(brief.topic), fillerTitles, [hookTitle, ...titles.slice(-1)]),
    );
    sceneTexts.push(counted?.items[j] ?? mine[0] ?? brief.topic);
  }
  const styles = (req.styles ?? [])
    .map((s) => clean(s))
    .filter(Boolean)
    .slice(0, 5);
  return {
    title: titleOf(req.title, brief.topic),
    language: pack.code,
    hook: hook.text,
    beats,
    callToAction: cta.text,
    scenes: [brief.topic, ...sceneTexts, brief.topic].map((text, i) => sceneOf(text, styles, i)),
    titles: [hookTitle, ...titles, ctaTitle(pack, ctaLead)],
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

/**
 * The list a brief gives after a colon in its first sentence ("Five habits for calmer mornings:
 * water first, daylight, a short walk"): its lead and its items (at least two, each of at most
 * six words, a leading "and"/"y"/"und"… dropped), or undefined.
 */
export function briefList(prompt: string): { lead: string; items: string[] } | undefined {
  const m = /^([^:.!?]{3,80}):\s*(.+)$/su.exec(clean(prompt));
  if (!m) return undefined;
  const first = m[2].split(/[.!?](?:\s|$)/u)[0];
  const items = first
    .split(/\s*[,;]\s*/u)
    .map((x) => x.replace(/^(?:and|or|y|o|e|und|oder|et|ou)\s+/iu, '').trim())
    .filter(Boolean);
  if (items.length < 2 || items.some((x) => countWords(x) > 6)) return undefined;
  return { lead: m[1].trim(), items };
}

/** The headings of `bodies` body slides from a brief's list: its items in turn (several to a slide when they outnumber the slides), then `fallback`. */
function listHeadings(items: string[], bodies: number, fallback: (i: number) => string): string[] {
  return Array.from({ length: bodies }, (_, i) => {
    const mine = items.slice(Math.floor((i * items.length) / bodies), Math.floor(((i + 1) * items.length) / bodies));
    return mine.length ? clip(sentenceCase(mine.join(', ')), HEADING_MAX) : fallback(i);
  });
}

export function writeLocalSlides(req: SlideCopyRequest): SlideCopy {
  const pack = packFor(req.language);
  const count = Math.trunc(req.slideCount);
  if (!(count >= 2 && count <= MAX_SLIDES))
    throw new WriterFailed(`slide count must be 2–${MAX_SLIDES}, got ${req.slideCount}`, { retryable: false });
  const brief = readBrief(pack, req.prompt, req.title, 30);
  const topic = brief.topic;
  const briefs = [...(brief.claim ? [brief.claim] : []), ...brief.content];
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
  // A brief that lists its points: the hook is the list's lead (unless a title of its own was given), each body slide an item.
  const list = briefList(req.prompt);
  const hook =
    list && (!req.title || list.lead.startsWith(req.title.replace(/…$/u, '')) || req.title.startsWith(list.lead))
      ? list.lead
      : titleOf(req.title, topic);
  const headings = listHeadings(list?.items ?? [], bodies, (i) => pack.slideHeadings[i % pack.slideHeadings.length]);
  const slides: SlideText[] = [{ role: 'hook', heading: clip(hook, HEADING_MAX), body: pack.slideHook }];
  groups.forEach((g, i) => {
    const body = g.length ? pack200(g) : fill(pack.fillers[(h + i * 5) % pack.fillers.length], clip(topic, 80), pack.code);
    slides.push({ role: 'body', heading: headings[i], body: clip(body, BODY_MAX) });
  });
  const short = clip(topic, HEADING_MAX - pack.slideCtaHeading.replace('{topic}', '').length);
  slides.push({ role: 'cta', heading: clip(fill(pack.slideCtaHeading, short, pack.code), HEADING_MAX), body: pack.slideCtaBody });
  return { title: titleOf(req.title, topic), language: pack.code, slides };
}

export function createLocalWriter(): Writer {
  return {
    name: 'local',
    async writeScript(req, signal) {
      signal?.throwIfAborted();
      return req.presenterTemplate ? writePresenterScript(req) : writeLocalScript(req);
    },
    async writeSlides(req, signal) {
      signal?.throwIfAborted();
      return writeLocalSlides(req);
    },
  };
}
