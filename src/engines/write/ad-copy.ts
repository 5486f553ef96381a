// The words of a template ad (static, video and UGC ads, local or composited over a model's
// picture): its headline, subheadline, call to action, offer, badge and the caption lines a video
// ad shows in order. In this order of precedence: the customer's `copy` fields (POST /generations
// `copy`), verbatim; then text the prompt quotes after a label (`headline "Zero sugar."`,
// `CTA: "Try it free"`), verbatim; then short copy derived from the rest of the prompt: a headline
// of at most 7 words (the subject and its benefit, without the instruction, the scene and the
// style words), a call to action of at most 3 words, a subheadline when the prompt states a benefit
// worth a second line, an offer only when the prompt states one. Nothing here pastes the prompt.
// Every ad renderer reads its texts through adCopy(), so the words are decided in one place; a
// static template's structure (comparison points, features, before/after, quote, hero number, app
// name) through adStructure(), from the same brief, never with invented claims or names. A badge
// only when there is an offer.
import type { GenerationJob } from '../generation.ts';
import { presenterHook } from './presenter.ts';

/** The copy a customer sent with a template generation (each field optional, used verbatim). */
export interface CustomerCopy {
  headline?: string;
  subheadline?: string;
  cta?: string;
  offer?: string;
}

/** The texts an ad shows. */
export interface AdCopy {
  headline: string;
  /** A second line under the headline, or null for none. */
  subheadline: string | null;
  /** The call to action (button text). */
  cta: string;
  /** An offer (e.g. "20% off this week"), or null for none. */
  offer: string | null;
  /** Sticker text of banner layouts (-20%, FREE, SALE), only when there is an offer; else null. */
  badge: string | null;
  /** The caption lines of a video ad without narration, in reading order, one per line ('\n'). */
  captions: string;
}

export type AdCopyInput = Pick<GenerationJob, 'prompt' | 'title' | 'type' | 'templateSlug' | 'copy'>;

/** The most words a derived headline has. */
export const HEADLINE_MAX_WORDS = 7;
const SUBHEADLINE_MAX_WORDS = 12;

/** The texts of the ad of `job`: the customer's copy first, then the prompt's quoted copy, else derived. */
export function adCopy(job: AdCopyInput): AdCopy {
  const quoted = quotedCopy(job.prompt || '');
  const given: CustomerCopy = { ...quoted.copy, ...definedFields(job.copy) };
  // A UGC ad's headline is its presenter's on-screen hook ("My honest review after a month").
  const derived =
    job.type === 'ugc_ad' && job.templateSlug ? presenterHook(quoted.rest, job.templateSlug) : headlineFrom(quoted.rest, job.title);
  const benefit = benefitFrom(quoted.rest, derived) ?? afterVerb(quoted.rest, derived);
  // "Fresh lemonade for hot days" → "Fresh lemonade" over "For hot days", when no benefit takes the second line.
  const split = given.headline || benefit ? null : splitPurpose(derived);
  const headline = given.headline ?? split?.[0] ?? derived;
  const subheadline = given.subheadline ?? (given.headline ? distinct(derived, headline) : (split?.[1] ?? benefit));
  const offer = given.offer ?? offerFrom(quoted.rest);
  const cta = given.cta ?? ctaFrom(quoted.rest, job.type);
  return {
    headline,
    subheadline,
    cta,
    offer,
    badge: offer ? badgeFrom(`${offer} ${quoted.rest}`, job.templateSlug ?? '') : null,
    captions: [headline, subheadline, offer, cta].filter((x): x is string => Boolean(x)).join('\n'),
  };
}

const definedFields = (copy: CustomerCopy | undefined): CustomerCopy =>
  Object.fromEntries(Object.entries(copy ?? {}).filter(([, v]) => typeof v === 'string' && v.trim())) as CustomerCopy;

/** `text` unless it says the same as `other` (then null). */
function distinct(text: string, other: string): string | null {
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  return norm(text) && norm(text) !== norm(other) && !/^new$/i.test(text) ? text : null;
}

// ------------------------------------------------------------------ quoted copy in the prompt

const LABELS: [keyof CustomerCopy, string][] = [
  ['subheadline', 'sub-?head(?:line|ing)?|sub-?title|sub ?line'],
  ['headline', 'head(?:line|ing)|title|tag ?line|slogan'],
  ['cta', 'cta|call[- ]to[- ]action|button(?: text| label)?'],
  ['offer', 'offer|promo(?:tion)?|deal'],
];
// A label, an optional ":"/"=" or "reads"/"saying", then the words in double or single quotes
// (straight or curly; an apostrophe inside single quotes is kept: 'Don't wait').
const QUOTED = new RegExp(
  String.raw`(?:[,;]\s*|\s+(?:and|with|plus)\s+)?(?:(?:the|a|an|its|our)\s+)?\b(${LABELS.map(([, l]) => l).join('|')})\b` +
    String.raw`\s*(?:[:=]|\s(?:reads?|reading|says?|saying|of|is|should be|like))?\s*` +
    String.raw`(?:["“”„«]([^"“”„«»\n]+)["”“»]|[‘'’]((?:[^‘'’\n]|['’](?=\p{L}))+)[’'‘](?!\p{L}))`,
  'giu',
);

/** The copy the prompt quotes after a label, and the prompt without those parts. */
export function quotedCopy(prompt: string): { copy: CustomerCopy; rest: string } {
  const copy: CustomerCopy = {};
  const rest = prompt.replace(QUOTED, (_m, label: string, dq?: string, sq?: string) => {
    const field = LABELS.find(([, l]) => new RegExp(`^(?:${l})$`, 'i').test(label))![0];
    const text = (dq ?? sq ?? '').trim();
    if (text && copy[field] === undefined) copy[field] = text;
    return '';
  });
  return {
    copy,
    rest: rest
      .replace(/\s+([,.;:!?])/g, '$1')
      .replace(/^[\s,;:]+|[\s,;:]+$/g, '')
      .replace(/\s{2,}/g, ' '),
  };
}

// ------------------------------------------------------------------ headline

export const LEADING_INSTRUCTION =
  /^(?:(?:please|now|also)\s+)?(?:(?:i|we)\s+(?:want|need|would like)(?:\s+to\s+\w+)?|(?:can|could)\s+you\s+\w+|create|make|generate|design|render|produce|draw|show\s+off|show(?:case)?|highlight|promote|advertise|announce|introduce|present|feature|build|write|craft|give\s+me|let'?s\s+\w+)\s+(?:me\s+|us\s+)?(?:an?\s+|the\s+|some\s+)?/i;
const MEDIA_WORDS =
  'ad|advert|advertisement|commercial|spot|video|clip|image|picture|photo|photograph|shot|close-?up|render|reveal|poster|banner|flyer|post|story|reel|carousel|visual|graphic|creative|campaign|promo';
export const MEDIA_NOUN = new RegExp(
  String.raw`\b(?:${MEDIA_WORDS})s?\s+(?:for|about|of|showing|featuring|with|promoting|announcing|introducing|on)\s+`,
  'i',
);
/** Words before "ad for …" worth keeping ("summer sale ad for …" → "Summer sale: …"); style words are not. */
const OCCASION =
  /\b(?:sale|launch|promo|deal|offer|drop|collection|event|summer|winter|spring|autumn|fall|holiday|christmas|black friday|cyber monday|anniversary|back to school|valentine'?s?)\b/i;
/** A scene after the subject: "on a sunny kitchen counter", "against marble", "in the kitchen". */
const SCENE =
  /\s+(?:(?:on|against|atop|over|in front of|surrounded by|set (?:on|in|against)|lying on|sitting on|placed on)\s+|(?:in|at|by|near|inside|under|beside|next to|under)\s+(?:an?|the|some)\s+).*$/i;
const PERSON_WITH =
  /^(?:(?:an?|the|some|two|three)\s+)?(?:[\w-]+\s+){0,2}?(?:woman|women|man|men|girl|boy|person|people|customer|creator|friends?|family|couple|model|athlete|runner|chef|kids?|child(?:ren)?|mom|dad|student|developer|barista|influencer|presenter|someone)\s+(?:(?:is|are)\s+)?(?:using|holding|wearing|drinking|eating|enjoying|applying|unboxing|trying|opening|pouring|showing|reviewing|with)\s+/i;
/** A sentence that only instructs (style, tone, format), never copy. */
const STYLE_SENTENCE =
  /^(?:make it|keep it|use|style|tone|mood|no\s|don'?t|do not|in the style|shot on|lighting|colou?rs?|aspect|format|end with|ending with|start with)\b/i;
const TAIL_WORDS = new Set(
  'a an the of and or with for to on in at by from our your their its is are was be that which who while when so as but into than this these those my'.split(
    ' ',
  ),
);

/** The first sentence of `text` that is not an instruction of style. */
function firstSentence(text: string): string {
  const sentences = text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => /\p{L}/u.test(s));
  return sentences.find((s) => !STYLE_SENTENCE.test(s)) ?? '';
}

/** The subject of a prompt's sentence: without the instruction, the media noun, the scene and trailing clauses. */
function subjectOf(sentence: string): string {
  let text = sentence.replace(OFFER_PHRASE, ' ').replace(/\s{2,}/g, ' ');
  text = text.split(/\s*(?:[,;(]|\s[-–—]\s|:\s)\s*/)[0] ?? '';
  text = text.replace(LEADING_INSTRUCTION, '');
  const noun = MEDIA_NOUN.exec(text);
  if (noun) {
    const before = text
      .slice(0, noun.index)
      .trim()
      .replace(/^(?:an?|the)\s+/i, '');
    const after = text.slice(noun.index + noun[0].length).trim();
    text = OCCASION.test(before) && after ? `${before}: ${after}` : after || before;
  }
  // "a woman using our serum" → "our serum": the product, not the person in the scene.
  text = text.replace(PERSON_WITH, '');
  const scene = text.replace(SCENE, '');
  if (scene.split(/\s+/).length >= 2 || !text.includes(' ')) text = scene;
  return text
    .replace(/^(?:an?|the|some)\s+/i, '')
    .replace(/[\s.!?,;:"'“”]+$/u, '')
    .trim();
}

/** At most `max` words: trailing clauses dropped first, then "X is Y" as "X: Y", then a cut that never ends on a small word. */
export function shorten(text: string, max: number): string {
  let words = text.split(/\s+/).filter(Boolean);
  const clause =
    /^(?:for|with|that|which|who|while|when|so|to|in|at|and|because|by|from|without|into|on|after|before|during|until|since|over|through|across|like)$/i;
  while (words.length > max) {
    const cut = words.findLastIndex((w, i) => i >= 2 && clause.test(w));
    if (cut < 0) break;
    words = words.slice(0, cut);
  }
  if (words.length > max) {
    const verb = words.findIndex((w, i) => i >= 1 && /^(?:is|are|makes|keeps|gives|helps|turns|brings)$/i.test(w));
    if (verb > 0 && verb < words.length - 1) {
      const subject = words.slice(0, verb).filter((w, i) => i > 0 || !/^(?:why|how|what)$/i.test(w));
      if (subject.length) words = [...subject.slice(0, -1), `${subject.at(-1)}:`, ...words.slice(verb + 1)];
    }
  }
  // "Our stain remover takes a wine-stained white shirt …" → "Our stain remover": the subject
  // before its verb rather than a phrase cut in the middle (adCopy says the rest on the second line).
  const verb = verbAt(words, max);
  if (words.length > max && verb > 0) words = words.slice(0, verb);
  if (words.length > max) words = words.slice(0, max);
  while (words.length > 1 && TAIL_WORDS.has(words.at(-1)!.toLowerCase().replace(/[:,]$/, ''))) words.pop();
  return words.join(' ').replace(/[:,;]$/, '');
}

const VERB =
  /^(?:takes|fixes|keeps|makes|gives|helps|turns|brings|cuts|saves|tracks|folds|fits|beats|lets|gets|loves|works|tastes|feels|looks|cleans|removes|protects|stays|goes|comes|runs)$/i;

/** Where the verb after a subject of two words or more is (within the first `max` words), else -1. */
function verbAt(words: string[], max: number): number {
  return words.findIndex((w, i) => i >= 2 && i <= max && VERB.test(w));
}

/** The rest of a subject sentence a headline cut at its verb leaves out ("Takes a wine-stained white shirt back to spotless"), else null. */
function afterVerb(prompt: string, headline: string): string | null {
  const words = subjectOf(firstSentence(prompt || ''))
    .split(/\s+/)
    .filter(Boolean);
  const verb = verbAt(words, HEADLINE_MAX_WORDS);
  if (
    words.length <= HEADLINE_MAX_WORDS ||
    verb < 0 ||
    words.slice(0, verb).join(' ').toLowerCase() !== headline.replace(/^Meet /, '').toLowerCase()
  )
    return null;
  return capitalise(shorten(words.slice(verb).join(' '), 12));
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** A short headline (at most 7 words) from the prompt's subject; the title, else "New", when it has none. */
export function headlineFrom(prompt: string, fallback: string): string {
  let text = subjectOf(firstSentence(prompt || ''));
  if (/^our\s+new\s/i.test(text)) text = `Meet o${text.slice(1)}`;
  text = shorten(text, HEADLINE_MAX_WORDS);
  if (!/\p{L}|\p{N}/u.test(text)) text = shorten((fallback || '').trim(), HEADLINE_MAX_WORDS);
  return text ? capitalise(text) : 'New';
}

/** A headline of 4 words or more with a "for …" purpose: the subject and the purpose as two lines. */
function splitPurpose(headline: string): [string, string] | null {
  const words = headline.split(/\s+/);
  const at = words.findIndex((w, i) => i >= 2 && /^for$/i.test(w));
  const list = /^(?:\d+|two|three|four|five|six|seven|eight|nine|ten)$/i.test(words[0]);
  if (words.length < 4 || at < 0 || at > words.length - 2 || headline.includes(':') || list) return null;
  return [words.slice(0, at).join(' '), capitalise(words.slice(at).join(' '))];
}

/** A second line: the prompt's next sentence that states a fact or benefit (not an instruction), else null. */
export function benefitFrom(prompt: string, headline: string): string | null {
  const sentences = (prompt || '')
    .replace(OFFER_PHRASE, ' ')
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => /\p{L}/u.test(s));
  for (const s of sentences.slice(1)) {
    if (STYLE_SENTENCE.test(s) || LEADING_INSTRUCTION.test(s)) continue;
    const line = shorten(s.replace(/[\s.!?,;:]+$/u, ''), SUBHEADLINE_MAX_WORDS);
    if (line.split(/\s+/).length >= 2) return distinct(capitalise(line), headline);
  }
  return null;
}

// ------------------------------------------------------------------ offer, call to action, badge

const perPeriod = (price: string) => (/\/\s*(?:month|mo)/i.test(price) ? '/month' : /\/\s*(?:year|yr)/i.test(price) ? '/year' : '');

/** The offers a prompt can state (a discount, a deal, a price, free shipping, a free trial), with their wording. */
const OFFERS: [RegExp, (m: RegExpExecArray) => string][] = [
  [
    /\b(?:save\s+)?(\d{1,2})\s*%\s*off\b(?:\s+(?:everything|all\s+\w+|sitewide))?(\s+(?:this\s+(?:week|weekend|month)|today(?:\s+only)?|until\s+\w+|for\s+(?:a\s+limited\s+time|\d+\s+days)))?/i,
    (m) => `${m[1]}% off${m[2] ?? ''}`,
  ],
  [/\bsave\s+(\d{1,2})\s*%/i, (m) => `Save ${m[1]}%`],
  [/\b(?:buy\s+one,?\s+get\s+one(?:\s+free)?|bogo)\b/i, () => 'Buy one, get one free'],
  [
    /\b(only|just|from|for|at)?\s*([$€£]\s?\d+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?\s?(?:€|EUR|USD|dollars|euros))(?:\s*\/\s*(?:month|mo|year|yr))?/i,
    (m) => `${/^from$/i.test(m[1] ?? '') ? 'From' : 'Only'} ${m[2].replace(/\s+/g, '')}${perPeriod(m[0])}`,
  ],
  [/\bfree\s+(?:shipping|delivery)\b/i, (m) => (/delivery/i.test(m[0]) ? 'Free delivery' : 'Free shipping')],
  [/\b(?:(\d{1,3})[- ]day\s+)?free\s+trial\b/i, (m) => (m[1] ? `${m[1]}-day free trial` : 'Free trial')],
  [/\bfirst\s+(month|box|order|lesson|class)\s+(?:is\s+)?free\b/i, (m) => `First ${m[1].toLowerCase()} free`],
];
/** The wording of every offer (with a "with"/"at" before it), removed from what the headline is made of. */
const OFFER_PHRASE = new RegExp(
  String.raw`(?:\s*,?\s*(?:with|and|plus|now|at|get|enjoy)\s+)?(?:${OFFERS.map(([r]) => r.source).join('|')})`,
  'gi',
);

/** The offer the prompt states (at most two, joined), else null. */
export function offerFrom(prompt: string): string | null {
  const found: string[] = [];
  for (const [re, word] of OFFERS) {
    const m = re.exec(prompt || '');
    if (m) found.push(capitalise(word(m).trim()));
  }
  if (!found.length) return null;
  const two = found.length > 1 ? `${found[0]} + ${found[1].charAt(0).toLowerCase()}${found[1].slice(1)}` : found[0];
  return two.length <= 40 ? two : found[0];
}

/** Call to action (at most 3 words) from the prompt's wording. */
export function ctaFrom(prompt: string, type: GenerationJob['type']): string {
  const p = (prompt || '').toLowerCase();
  if (/\bfree trial\b/.test(p)) return 'Try it free';
  if (/\b(app|download|install)\b/.test(p)) return 'Install now';
  if (/\b(book|reserve|appointment)\b/.test(p)) return 'Book now';
  if (/\b(sign ?up|join|register|subscribe|newsletter|waitlist)\b/.test(p)) return 'Sign up';
  if (/\b(learn|discover|guide|how to|course|webinar)\b/.test(p)) return 'Learn more';
  if (/\b(order|delivery|food|menu|restaurant|pizza)\b/.test(p)) return 'Order now';
  return type === 'ugc_ad' ? 'Get yours' : 'Shop now';
}

/** Sticker text for banner layouts: a discount from the offer or prompt, else FREE / SALE / NEW. */
export function badgeFrom(prompt: string, slug: string): string {
  const pct = /(\d{1,2})\s*%/.exec(prompt || '');
  if (pct) return `-${pct[1]}%`;
  if (/\bfree (?:shipping|delivery)\b/i.test(prompt)) return 'FREE';
  return /sale|offer|deal|countdown/i.test(`${slug} ${prompt}`) ? 'SALE' : 'NEW';
}

// ------------------------------------------------------------------ a template's structure

/**
 * What a template promises beyond its headline, in words of the brief (never invented claims,
 * statistics or names): a comparison's two sides and its points, a feature grid's callouts, the
 * two halves of a before/after, a testimonial's quote (a complete sentence) and its attribution,
 * a sale's hero number. Null when the brief gives nothing to fill it with (the ad is then a poster).
 */
export type AdStructure =
  | { kind: 'comparison'; us: string; them: string; points: string[] }
  | { kind: 'features'; items: string[] }
  | { kind: 'before-after'; before: string; after: string }
  | { kind: 'quote'; quote: string; attribution: string }
  | { kind: 'offer'; hero: string }
  | { kind: 'app'; name: string; line: string | null };

export type AdStructureInput = AdCopyInput & { brandName?: string };

/** The structure the template of `job` shows (static ads), from the customer's copy and the prompt. */
export function adStructure(job: AdStructureInput): AdStructure | null {
  const slug = job.templateSlug ?? '';
  const copy = adCopy(job);
  const { rest } = quotedCopy(job.prompt || '');
  const given = definedFields(job.copy);
  if (/-vs-|versus|comparison/.test(slug)) return comparisonFrom(rest, given.subheadline, job.brandName);
  if (/feature|callout/.test(slug)) {
    const items = listItems(given.subheadline ?? '') ?? listItems(rest);
    return items ? { kind: 'features', items: items.slice(0, 4) } : null;
  }
  if (/before|after/.test(slug)) return beforeAfterFrom(rest);
  if (/testimonial|quote|review/.test(slug)) {
    const quote = given.headline ?? quoteFrom(rest) ?? copy.headline;
    return { kind: 'quote', quote, attribution: job.brandName ? `Verified ${job.brandName} customer` : 'Verified customer' };
  }
  if (/app-install|app-/.test(slug)) return appFrom(rest, copy, job.brandName);
  if (/sale|offer|deal|flash|countdown|promo|banner/.test(slug) && copy.offer) {
    const hero = offerHero(copy.offer);
    return hero ? { kind: 'offer', hero } : null;
  }
  return null;
}

const ITEM_MAX_WORDS = 5;

/** A list the text states ("…: light foam, grippy sole and breathable knit"), 2 to 5 short items, else null. */
export function listItems(text: string): string[] | null {
  for (const sentence of (text || '').split(/(?<=[.!?])\s+|\n+/)) {
    const colon = sentence.indexOf(':');
    const body = (colon >= 0 ? sentence.slice(colon + 1) : sentence).replace(/[.!?]+$/, '');
    const parts = body
      .split(/\s*[,;]\s*(?:and\s+|or\s+|plus\s+)?|\s+(?:and|plus)\s+/i)
      .map((p) => p.trim().replace(/^(?:an?|the)\s+/i, ''))
      .filter(Boolean);
    const short = parts.every((p) => p.split(/\s+/).length <= ITEM_MAX_WORDS);
    if (parts.length >= 2 && parts.length <= 5 && short) return parts.map(capitalise);
  }
  return null;
}

/** "Why our oat milk beats dairy: less water, less land" → Oat milk ✓ vs Dairy ✗ on those points. */
function comparisonFrom(prompt: string, subheadline: string | undefined, brand: string | undefined): AdStructure | null {
  const points = listItems(subheadline ?? '') ?? listItems(prompt);
  if (!points) return null;
  const head = firstSentence(prompt).split(':')[0];
  const m =
    /(?:^|\s)(?:why\s+|how\s+)?(?:our\s+|the\s+)?(.+?)\s+(?:beats|vs\.?|versus|outperforms|over|against|compared to|instead of)\s+(.+)$/i.exec(
      head.replace(LEADING_INSTRUCTION, ''),
    );
  const tidy = (s: string) => capitalise(shorten(s.replace(/^(?:our|the|an?|regular|ordinary)\s+/i, '').replace(/[.!?]+$/, ''), 3));
  const us = m ? tidy(m[1]) : brand || 'Us';
  const them = m ? tidy(m[2]) : 'Them';
  return { kind: 'comparison', us, them, points: points.slice(0, 3) };
}

/** "takes a wine-stained shirt back to spotless", "from X to Y", "turns X into Y": the two halves, else null. */
function beforeAfterFrom(prompt: string): AdStructure | null {
  const s = firstSentence(prompt).replace(/[.!?]+$/, '');
  const m =
    /\b(?:takes?|brings?|gets?)\s+(.+?)\s+(?:back\s+)?to\s+(.+)$/i.exec(s) ??
    /\bfrom\s+(.+?)\s+to\s+(.+)$/i.exec(s) ??
    /\bturns?\s+(.+?)\s+into\s+(.+)$/i.exec(s);
  if (!m) return null;
  const tidy = (x: string) => capitalise(shorten(x.replace(/^(?:an?|the|your|my)\s+/i, ''), 6));
  return { kind: 'before-after', before: tidy(m[1]), after: tidy(m[2]) };
}

const PERSON = 'customer|user|client|buyer|shopper|reader|parent|mum|mom|dad|reviewer|owner|member|guest|patient|student';
const REPORTED = new RegExp(
  String.raw`^(?:(?:an?|one|our|this|every)\s+)?(?:happy\s+|verified\s+|real\s+|loyal\s+)?(?:${PERSON})s?\s+(says?|loves?|writes?|tells us|thinks?|explains?)\s+(?:that\s+)?(.+)$`,
  'i',
);
const QUOTE_MAX_WORDS = 18;

/**
 * The prompt's first sentence as a customer's words, a complete sentence: "A customer loves how
 * our desk fixed her back pain" → "I love how this desk fixed my back pain." Cut only at a clause
 * boundary when long; null when nothing is left.
 */
export function quoteFrom(prompt: string): string | null {
  let s = firstSentence(prompt)
    .replace(LEADING_INSTRUCTION, '')
    .replace(/[.!?]+$/, '')
    .trim();
  const m = REPORTED.exec(s);
  if (m) {
    const verb = m[1].toLowerCase();
    const said = /^says?|^tells|^writes?|^explains?/.test(verb) ? m[2] : `I ${verb.replace(/s$/, '')} ${m[2]}`;
    s = said
      .replace(/\b(?:she|he|they)\b/gi, 'I')
      .replace(/\bhim\b/gi, 'me')
      .replace(/\b(?:her|his|their)\b/gi, 'my')
      .replace(/\bour\b/gi, 'this')
      .replace(/\bus\b/g, 'them');
  }
  let words = s.split(/\s+/).filter(Boolean);
  if (words.length > QUOTE_MAX_WORDS) {
    const cut = words.findLastIndex((w, i) => i >= 4 && i < QUOTE_MAX_WORDS && /[,;]$/.test(w));
    if (cut < 0) return null;
    words = words.slice(0, cut + 1);
  }
  const text = words.join(' ').replace(/[,;:]$/, '');
  return /\p{L}/u.test(text) ? `${capitalise(text)}.` : null;
}

/** An app's name ("Download Pocket Budget, …", else the brand) and what it does ("the app that tracks …"), for its phone screen. */
function appFrom(prompt: string, copy: AdCopy, brand: string | undefined): AdStructure | null {
  const s = firstSentence(prompt).replace(/[.!?]+$/, '');
  const named = /\b(?:download|install|get|try)\s+(?:the\s+|our\s+)?(.+?)(?:\s*[,(:;]|\s+[-–—]\s|\s+(?:app|on|for|today|now)\b|$)/i.exec(s);
  const name = named ? shorten(named[1], 4) : brand;
  if (!name) return null;
  const does = /\bthe\s+app\s+(?:that|which)\s+(.+)$/i.exec(s) ?? /\b(?:app|it)\s+(?:that|which)\s+(.+)$/i.exec(s);
  const line = does ? capitalise(shorten(does[1], 8)) : distinct(copy.subheadline ?? '', name);
  return { kind: 'app', name: capitalise(name), line: line || null };
}

/** The hero of a sale: "-30%" from "30% off …", "$19" from "Only $19", else the offer itself when it is two words or one. */
export function offerHero(offer: string): string | null {
  const pct = /(\d{1,2})\s*%/.exec(offer);
  if (pct) return `-${pct[1]}%`;
  const price = /[$€£]\s?\d+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?\s?€/.exec(offer);
  if (price) return price[0].replace(/\s+/g, '');
  return offer.split(/\s+/).length <= 2 ? offer.toUpperCase() : null;
}
