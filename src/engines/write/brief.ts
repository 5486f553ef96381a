// How the local writer reads a brief: its subject as a noun phrase that fits inside a template
// sentence ("embedded Rust", not "Why embedded Rust is worth"), the claim it makes ("Embedded Rust
// is worth learning."), the list it announces ("three reasons", "five quick tips for …") and its
// other sentences, instructions of style left out. Per language (BRIEF_WORDS); nothing is translated.
import { LEADING_INSTRUCTION, MEDIA_NOUN } from './ad-copy.ts';
import { BRIEF_WORDS, type LanguagePack } from './languages.ts';

export interface ReadBrief {
  /** The subject, a noun phrase of at most 8 words, written to go mid-sentence. */
  topic: string;
  /** "X is Y" of a "Why X is Y" brief, as a sentence; else null. */
  claim: string | null;
  /** The list the brief announces: how many items and the words announcing it ("three reasons why …"). */
  list: { count: number; words: string } | null;
  /** The brief's other sentences, to narrate (the instruction, the subject alone and style notes left out). */
  content: string[];
  /**
   * What the brief lists, each item as the brief says it: the items after a colon ("…: zero sugar,
   * real fizz, and it keeps you hydrated all day"), else, when it announces a list, its other sentences.
   */
  facts: string[];
  /** "how to brew better coffee" of a "How to brew better coffee …" brief (English), else null. */
  howTo: string | null;
}

const TOPIC_MAX_WORDS = 8;
/** Sentences that only instruct the writer (tone, format, style), never narration. */
const INSTRUCTION =
  /^(?:make it|keep it|style|tone|mood|no\s|don'?t|do not|in the style|shot on|lighting|colou?rs?|aspect ratio|format)\b/i;

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const stripEnd = (text: string) => text.replace(/[\s.!?।。,;:–—-]+$/u, '');
const words = (s: string) => s.split(/\s+/).filter(Boolean);

/** A phrase to go mid-sentence: a first word capitalised only because it opened the brief is lowered. */
export function midSentence(phrase: string, openedBrief: boolean): string {
  const first = words(phrase)[0] ?? '';
  if (!openedBrief || !/^\p{Lu}\p{Ll}+$/u.test(first)) return phrase;
  return phrase.charAt(0).toLowerCase() + phrase.slice(1);
}

const sentenceCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** At most `max` words, never ending on a small word of English ("for", "the"); others are cut plainly. */
function fewWords(phrase: string, max: number): string {
  let w = words(phrase).slice(0, max);
  while (w.length > 1 && /^(?:a|an|the|of|and|or|with|for|to|on|in|at|by|from|our|your|is|are|that|just|very|so)$/i.test(w.at(-1)!))
    w = w.slice(0, -1);
  return stripEnd(w.join(' '));
}

interface ListFound {
  count: number;
  /** The count, its noun and what follows it, as the brief says it ("five quick tips for X"). */
  words: string;
  /** What follows the noun ("for X"), '' for none. */
  after: string;
  /** Where the announcement starts in the sentence (with a "in"/"with" before it). */
  at: number;
}

/** The list a sentence announces ("three reasons", "in 5 quick tips for X"). */
function listIn(code: string, sentence: string): ListFound | null {
  const bw = BRIEF_WORDS[code] ?? BRIEF_WORDS.en;
  const num = `(\\d{1,2}|${bw.numbers.slice(2).map(esc).join('|')})`;
  const noun = `(${bw.listNouns.map(esc).join('|')})`;
  const re = new RegExp(
    `(?:^|[\\s,:;]+(?:in\\s+|with\\s+|en\\s+|con\\s+|avec\\s+|in\\s+)?)${num}\\s+((?:\\S+\\s+){0,2}?)${noun}(?=[\\s,.:;!?]|$)(.*)$`,
    'iu',
  );
  const m = re.exec(sentence);
  if (!m) return null;
  const count = /^\d+$/.test(m[1]) ? Number(m[1]) : bw.numbers.indexOf(m[1].toLowerCase());
  if (!(count >= 2 && count <= 10)) return null;
  const after = stripEnd(m[4].split(/\s*[,;:(]\s*/)[0] ?? '').trim();
  const said = `${bw.numbers[count]} ${m[2]}${m[3].toLowerCase()}`;
  return { count, words: after ? `${said} ${after}` : said, after, at: m.index };
}

/** "Why X is Y" → subject X and claim "X is Y" (the question word dropped). */
function claimIn(code: string, sentence: string): { subject: string; claim: string } | null {
  const bw = BRIEF_WORDS[code] ?? BRIEF_WORDS.en;
  if (!bw.questions.length) return null;
  const q = new RegExp(`^(?:${bw.questions.map(esc).join('|')})\\s+(.+)$`, 'iu').exec(stripEnd(sentence));
  if (!q) return null;
  const cop = new RegExp(`^(.+?)\\s+(?:${bw.copulas.map(esc).join('|')})\\s+(.+)$`, 'iu').exec(q[1]);
  if (!cop || words(cop[1]).length > TOPIC_MAX_WORDS) return null;
  return { subject: cop[1], claim: q[1] };
}

const CONJUNCTION = /^(?:and|but|or|so|then|y|pero|o|et|mais|ou|puis|und|aber|oder|e|mas|ma|poi)\s+/iu;

/** A clause as a sentence of its own: no leading conjunction, a capital, its end punctuation. */
function asSentence(pack: LanguagePack, clause: string): string {
  const text = clause.trim().replace(CONJUNCTION, '');
  if (/[.!?।。]$/u.test(text)) return sentenceCase(text);
  return `${sentenceCase(text.replace(/[\s,;:–—-]+$/u, ''))}${pack.stop}`;
}

/** A long subject without its trailing clause ("the board for embedded Rust beginners" → "the board"). */
function nounPhrase(raw: string): string {
  const w = words(raw);
  if (w.length <= 5) return raw;
  const cut = w.findIndex(
    (x, i) => i >= 2 && /^(?:for|with|that|which|who|to|in|on|at|from|by|para|con|que|pour|avec|qui|für|mit|das|die|per|com)$/i.test(x),
  );
  return cut > 0 ? w.slice(0, cut).join(' ') : raw;
}

const LIST_PREPOSITION = /^(?:for|on|about|of|de|para|pour|für|per|sobre|sur)\s+/iu;

/**
 * A brief's sentences read: its subject (the title when given), its claim, its list and the
 * sentences left to narrate. `aboutAt` finds "a video about X" in a sentence.
 */
export function readBriefText(
  pack: LanguagePack,
  sentences: string[],
  givenTitle: string | undefined,
  aboutAt: (s: string) => { at: number; word: string } | undefined,
): ReadBrief {
  const usable = sentences.filter((s) => !INSTRUCTION.test(s.trim()));
  // A title that is only the brief's beginning (a faceless video's title made from its prompt) is not a subject.
  const squash = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
  const title = givenTitle && squash(sentences.join(' ')).startsWith(squash(givenTitle)) ? undefined : givenTitle;
  const first = usable[0] ?? '';
  // "Show off the board" → "the board": the instruction goes, the article stays (it reads mid-sentence).
  const instruction = pack.code === 'en' ? LEADING_INSTRUCTION.exec(first) : null;
  let head = instruction ? `${/\bthe\s+$/i.test(instruction[0]) ? 'the ' : ''}${first.slice(instruction[0].length)}` : first;
  // "a carousel for our shoes" → "our shoes" (a media noun at the start names the format, not the subject).
  const medium = pack.code === 'en' ? MEDIA_NOUN.exec(head) : null;
  if (medium && words(head.slice(0, medium.index)).length <= 2) head = head.slice(medium.index + medium[0].length);
  const about = aboutAt(head);
  if (about) head = head.slice(about.at + about.word.length).trim();
  const list = listIn(pack.code, head);
  const main = stripEnd((list && list.at > 0 ? head.slice(0, list.at) : head).split(/\s*[:;(]\s+|\s[–—-]\s/u)[0] ?? head);
  // "Three reasons embedded Rust is winning …": the claim follows the list's noun.
  const claimed = claimIn(pack.code, main) ?? (list && list.at === 0 ? copulaIn(pack.code, list.after) : null);
  const howTo = pack.code === 'en' ? (/^how\s+to\s+\S+.*$/i.exec(main)?.[0] ?? null) : null;
  let raw = main;
  if (claimed) raw = claimed.subject;
  else if (howTo) raw = gerund(howTo.replace(/^how\s+to\s+/i, ''));
  else if (list && list.at === 0)
    raw = LIST_PREPOSITION.test(list.after) ? list.after.replace(LIST_PREPOSITION, '') : list.words.split(' ').slice(1).join(' ');
  if (title?.trim()) raw = stripEnd(title.trim());
  const opened = !title?.trim() && first.startsWith(raw);
  const topic = midSentence(fewWords(nounPhrase(raw), TOPIC_MAX_WORDS), opened) || '…';
  const claim = claimed ? `${sentenceCase(stripEnd(claimed.claim))}${pack.stop}` : null;
  const found =
    list ??
    usable
      .slice(1)
      .map((s) => listIn(pack.code, s))
      .find((x) => x !== null) ??
    null;
  const listWords =
    found && claimed && pack.code === 'en' && !found.after
      ? `${found.words} ${/reasons$/i.test(found.words) ? 'why' : 'about why'} ${stripEnd(claimed.claim)}`
      : found?.words;
  // The first sentence is narration unless it names the subject, makes the claim or announces the list.
  const firstIsContent = first && !about && !claimed && !list && !instruction && stripEnd(first) !== stripEnd(raw);
  const content = (firstIsContent ? usable : usable.slice(1)).map((c) => asSentence(pack, c)).filter((c) => /[\p{L}\p{N}]/u.test(c));
  const colon = usable.map(colonItems).find((x) => x.length >= 2) ?? [];
  const facts = colon.length ? colon : found ? content.map(stripEnd) : [];
  return {
    topic,
    claim,
    list: found ? { count: found.count, words: stripEnd(listWords ?? found.words) } : null,
    content: colon.length ? content.filter((c) => !colon.some((item) => c.includes(item))) : content,
    facts,
    howTo: howTo && stripEnd(howTo.split(/\s*[,;:(]\s*/u)[0]),
  };
}

/** The items of a list after a colon ("…: zero sugar, real fizz, and it keeps you hydrated"), each of 1–14 words; [] for none. */
export function colonItems(sentence: string): string[] {
  const at = sentence.indexOf(': ');
  if (at < 0) return [];
  const items = stripEnd(sentence.slice(at + 2))
    .split(/\s*[,;]\s*(?:(?:and|or|y|o|et|ou|und|oder|e)\s+)?/iu)
    .map((x) => stripEnd(x.trim()))
    .filter((x) => /[\p{L}\p{N}]/u.test(x));
  return items.length >= 2 && items.every((x) => words(x).length <= 14) ? items : [];
}

/** "X is Y" → subject X and claim "X is Y" (the subject at most TOPIC_MAX_WORDS words). */
function copulaIn(code: string, text: string): { subject: string; claim: string } | null {
  const bw = BRIEF_WORDS[code] ?? BRIEF_WORDS.en;
  const cop = new RegExp(`^(.+?)\\s+(?:${bw.copulas.map(esc).join('|')})\\s+(.+)$`, 'iu').exec(stripEnd(text));
  if (!cop || words(cop[1]).length > TOPIC_MAX_WORDS) return null;
  return { subject: cop[1], claim: stripEnd(text) };
}

/** An English verb phrase as a gerund phrase ("brew better coffee" → "brewing better coffee"). */
export function gerund(phrase: string): string {
  const [verb, ...rest] = words(phrase);
  if (!verb) return phrase;
  const v = verb.toLowerCase();
  let ing: string;
  if (/ie$/.test(v)) ing = `${v.slice(0, -2)}ying`;
  else if (/[^aeiou]e$/.test(v) && v !== 'be') ing = `${v.slice(0, -1)}ing`;
  else if (/^[^aeiou]*[aeiou][^aeiouwxy]$/.test(v)) ing = `${v}${v.at(-1)}ing`;
  else ing = `${v}ing`;
  return [ing, ...rest].join(' ');
}

/** Most words of an on-screen scene title. */
export const TITLE_WORDS = 6;
/** Spoken openers that say nothing on screen ("Here's why.", "Number three:", "And finally,"). */
const OPENER =
  /^(?:here'?s why|first things first|there'?s more|now the good part|and finally|number \S+?|first|second|third|next|then|finally|also|plus|but|and|so|now)(?=[\s.,:!]|$)[\s.,:!]*/iu;
const COPULA = /^(?:is|are|was|were|has|have|makes|gets|can|will|keeps|gives)$/i;
const PREPOSITION = /^(?:for|with|to|in|on|at|by|from|that|which|because|so|than|about|of)$/i;

/**
 * A sentence's on-screen title: a phrase of it, never a bag of its words. The clause after a colon
 * (its first item when it lists), else its first clause when short, else its subject with what it
 * is up to the first preposition ("Sparkling water is the easiest healthy swap"), else its subject,
 * else its first words; at most `max` words, never ending on a small word.
 */
export function sceneTitle(text: string, max = TITLE_WORDS): string {
  let t = text.replace(/\s+/g, ' ').trim();
  for (let k = 0; k < 4; k++) {
    const m = OPENER.exec(t);
    if (!m?.[0] || m[0].length >= t.length) break;
    t = t.slice(m[0].length);
  }
  const colon = t.indexOf(': ');
  if (colon >= 0) t = colonItems(t)[0] ?? t.slice(colon + 2);
  t = t.split(/(?<=[.!?।。])\s+/u)[0] ?? t;
  const clause = stripEnd(t.split(/\s*[,;(]\s+|\s[–—-]\s/u)[0] ?? t);
  const w = words(clause);
  if (w.length <= max) return sentenceCase(clause);
  const at = w.findIndex((x, i) => i >= 1 && i <= 4 && COPULA.test(x));
  if (at > 0) {
    const stop = w.findIndex((x, i) => i > at + 1 && PREPOSITION.test(x));
    const phrase = w.slice(0, stop > 0 ? stop : w.length);
    if (phrase.length <= max) return sentenceCase(stripEnd(phrase.join(' ')));
    if (at >= 2) return sentenceCase(w.slice(0, at).join(' '));
  }
  return sentenceCase(fewWords(clause, max));
}

/** An item's title: its phrase without a leading "it"/"they"/"I" ("it keeps you hydrated" → "Keeps you hydrated"). */
export function itemTitle(item: string, max = TITLE_WORDS - 1): string {
  const w = words(item);
  const bare = w.length >= 3 && /^(?:it|they|i|we)$/i.test(w[0]) ? w.slice(1).join(' ') : item;
  return sceneTitle(bare, max);
}
