// What a UGC presenter says to camera, by template: a talking-head review, a day in the life, a
// get-ready-with-me, an unboxing, a founder's story, a green-screen reaction. Each is a hook in the
// template's voice, one to three specifics read from the prompt (the product, what comes after a
// colon, "after a month", "a barista", "in my kitchen") and a call to action, in whole, properly
// capitalised sentences; the pipeline drops beats from the end to fit the duration
// (src/pipelines/generation/narration.ts fitted), so the specifics come first. Also the ad's
// on-screen hook for the template (presenterHook): a phrase of a few words, never one word, and
// not what the presenter says (the spoken words are captioned: a caption would repeat it).
import type { Script, ScriptRequest } from './types.ts';

/** What the prompt says, read for a presenter. */
export interface PresenterBrief {
  /** The product as a noun phrase without its determiner ("noise-cancelling earbuds"), or null. */
  product: string | null;
  /** Things the prompt lists about it ("glass dropper bottle", "fresh citrus scent"), at most three. */
  details: string[];
  /** How long the presenter has used it ("a month"), or null. */
  period: string | null;
  /** Who the presenter is in a day in the life ("a barista"), or null. */
  role: string | null;
  /** What a founder started ("a zero-waste shampoo bar company", "making fresh lemonade") and where ("in my kitchen"). */
  started: string | null;
  place: string | null;
  /** What a reaction reacts to ("how much you save"), or null. */
  reaction: string | null;
}

const clean = (s: string | undefined) => (s ?? '').replace(/[\s.!?,;:]+$/u, '').trim() || null;
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const wordCount = (s: string) => s.split(/\s+/).filter(Boolean).length;
/** Words that end a noun phrase of the product ("our espresso grinder after …"). */
const PHRASE_END = String.raw`(?=\s+(?:after|for|in|on|with|using|that|which|to|and|is|are|keeps?|makes?|fits?|from|at|by)\b|[,.:;!?]|$)`;

/** The specifics of a prompt a presenter can say. */
export function readPresenterBrief(prompt: string): PresenterBrief {
  const p = prompt.replace(/\s+/g, ' ').trim();
  // "our …" or "my …" names the product before "the …" or "this …" ("the life of", "in my kitchen" do not).
  const named = (det: string) =>
    clean(new RegExp(String.raw`(?<!\b(?:in|from|at|into)\s)\b(?:${det})\s+((?:[\w'-]+\s+){0,5}?[\w'-]+)${PHRASE_END}`, 'i').exec(p)?.[1]);
  const product = named('our|my') ?? named('the|this');
  const colon = p.indexOf(':');
  const details =
    colon >= 0
      ? p
          .slice(colon + 1)
          .split(/,|\band\b|;/)
          .map((d) => clean(d.replace(/^\s*(?:a|an|the|its|their)\s+/i, '')))
          .filter((d): d is string => Boolean(d) && wordCount(d!) <= 6)
          .slice(0, 3)
      : [];
  return {
    product: product && !/^(?:life|day|way|story)$/i.test(product) ? product : null,
    details,
    period: clean(/\bafter\s+((?:a|an|one|two|three|four|six|\d+)\s+(?:days?|weeks?|months?|years?))\b/i.exec(p)?.[1]),
    role: clean(/\bday in the life of\s+((?:an?|the)\s+[\w-]+(?:\s+[\w-]+)?)(?=\s+(?:using|with|who|and)\b|[,.:;!?]|$)/i.exec(p)?.[1]),
    started: clean(
      /\bstarted\s+((?:an?|the|my|our|making|selling|brewing|baking|roasting|building|designing|growing)\s+(?:[\w'-]+\s+){0,5}?[\w'-]+?)(?=\s+(?:in|from|at|with|because|after)\b|[,.:;!?]|$)/i.exec(
        p,
      )?.[1],
    ),
    place: clean(/\b((?:in|from)\s+(?:my|our|a)\s+[\w-]+(?:\s+[\w-]+)?)(?=[,.:;!?]|$)/i.exec(p)?.[1]),
    reaction: clean(/\breact(?:ing|s)?\s+to\s+(.+?)(?=\s+with\s+(?:our|my|the|this)\b|[,.:;!?]|$)/i.exec(p)?.[1]),
  };
}

/** A template's words: hooks (longest first, the one that fits is said), beats (in order of worth), calls to action. */
interface Lines {
  hooks: string[];
  beats: string[];
  ctas: string[];
}

/** "the espresso grinder", or "it" without a product. */
const theProduct = (b: PresenterBrief) => (b.product ? `the ${b.product}` : 'it');

/** The details as sentences, in three framings. */
function detailBeats(b: PresenterBrief): string[] {
  const frames = [
    (d: string) => `The ${d} is the first thing I noticed.`,
    (d: string) => `And the ${d}? I love it.`,
    (d: string) => `Plus, the ${d} makes a real difference.`,
  ];
  return b.details.map((d, i) => frames[i % frames.length](d));
}

/** A template's lines from the brief (`it`: the product as said; `details`: its specifics as sentences). */
type LinesOf = (b: PresenterBrief, it: string, details: string[]) => Lines;

/** Each UGC template's lines; the talking-head review is the default. */
const TEMPLATES: Record<string, LinesOf> = {
  'day-in-the-life': (b, it, details) => ({
    hooks: [
      b.role ? `Come along for a day in my life as ${b.role}.` : 'Come along for a day in my life.',
      b.role ? `Come along: my day as ${b.role}.` : 'Come along for my day.',
    ],
    beats: [
      ...details,
      `My mornings start with ${it}.`,
      'It keeps up with me through the busiest part of the day.',
      `By the end of the day, ${it} is still what I reach for.`,
    ],
    ctas: [`Make your days easier and try ${it}.`, 'Try it yourself.'],
  }),
  'get-ready-with-me': (b, _it, details) => ({
    hooks: [b.product ? `Let's get ready together with the ${b.product}.` : "Let's get ready together.", "Let's get ready together."],
    beats: [
      ...details,
      ...(/\b(\w+)-minute\b/i.test(b.product ?? '') ? [`It really takes ${/\b(\w+)-minute\b/i.exec(b.product!)![1]} minutes.`] : []),
      'Everything I need is in one place.',
      'A little goes a long way, and it lasts all day.',
    ],
    ctas: ['Try it in your own routine.', 'Try it yourself.'],
  }),
  'unboxing-ugc': (b, _it, details) => ({
    hooks: [b.product ? `Let's unbox the ${b.product} together.` : "Let's unbox this together.", "Let's unbox it."],
    beats: [...details, "It's packed really well, nothing rattling around.", "First impressions? I'm impressed."],
    ctas: ['Get yours and unbox it yourself.', 'Get yours today.'],
  }),
  'founder-story': (b, _it, details) => ({
    hooks: [
      b.started ? `Here's why I started ${b.started}${b.place ? ` ${b.place}` : ''}.` : "Here's why I started this.",
      b.started ? `Here's why I started ${b.started}.` : "Here's why I started this.",
      "Here's why I started it.",
    ],
    beats: [
      ...details,
      'Nothing out there did the job the way I wanted.',
      'So I made it myself, one batch at a time.',
      'Every order still gets that same care.',
    ],
    ctas: ['Try it and tell me what you think.', 'Give it a try.'],
  }),
  'green-screen-reaction': (b, _it, details) => ({
    hooks: [
      b.reaction ? `Okay, I had to react to ${b.reaction}${b.product ? ` with the ${b.product}` : ''}.` : 'Okay, I had to react.',
      b.reaction ? `Okay, I had to react to ${b.reaction}.` : 'Okay, I had to react.',
      b.reaction ? `Reacting to ${b.reaction}.` : 'Okay, I had to react.',
    ],
    beats: [
      ...details,
      'I did not expect the numbers to look like this.',
      "It's real, and it adds up fast.",
      'Honestly, this changed my mind.',
    ],
    ctas: ['See it for yourself.', 'Try it yourself.'],
  }),
  'talking-head-review': (b, _it, details) => ({
    hooks: [
      b.product ? `I've used the ${b.product} for ${b.period ?? 'a few weeks'}, so here's my take.` : "Here's my take.",
      b.product ? `Here's my take on the ${b.product}.` : "Here's my take.",
      "Here's my take.",
    ],
    beats: [
      ...details,
      'It fits right into my day without any fuss.',
      'It just works, every single day.',
      "Honestly, I didn't expect to like it this much.",
    ],
    ctas: ["If you're on the fence, try it for yourself.", 'Try it yourself.'],
  }),
};

function linesFor(slug: string, b: PresenterBrief): Lines {
  return (TEMPLATES[slug] ?? TEMPLATES['talking-head-review'])(b, theProduct(b), detailBeats(b));
}

/**
 * A presenter's script for UGC template `req.presenterTemplate`: the longest hook and call to
 * action that leave room for a specific in the words the duration allows, then the beats.
 */
export function writePresenterScript(req: ScriptRequest): Script {
  const brief = readPresenterBrief(req.prompt);
  const lines = linesFor(req.presenterTemplate ?? '', brief);
  // The words the voice can say, a little faster than its pace (narration.ts fits it at up to 1.4×).
  const budget = Math.max(8, Math.floor(req.wordsPerSecond * 1.2 * (req.targetSeconds + 1)));
  const beats = lines.beats.map(cap);
  const cta = lines.ctas.find((c) => wordCount(c) <= budget * 0.3) ?? lines.ctas.at(-1)!;
  // The longest hook that leaves room for the first specific, else for the call to action alone.
  const fits = (h: string, more: number) => wordCount(h) + wordCount(cta) + more <= budget;
  const hook = lines.hooks.find((h) => fits(h, wordCount(beats[0] ?? ''))) ?? lines.hooks.find((h) => fits(h, 0)) ?? lines.hooks.at(-1)!;
  return {
    title: presenterHook(req.prompt, req.presenterTemplate ?? ''),
    language: 'en',
    hook,
    beats,
    callToAction: cta,
    scenes: [hook, ...beats, cta].map(() => 'presenter talking to camera'),
  };
}

/** The ad's on-screen hook for UGC template `slug`: a phrase of two to six words. */
export function presenterHook(prompt: string, slug: string): string {
  const b = readPresenterBrief(prompt);
  const short = (s: string | null, max: number) => (s && wordCount(s) <= max ? s : null);
  switch (slug) {
    case 'day-in-the-life':
      return short(b.role, 3) ? `A day as ${b.role}` : 'A day in my life';
    case 'get-ready-with-me':
      return 'Get ready with me';
    case 'unboxing-ugc':
      return short(b.product, 4) ? `Unboxing the ${b.product}` : 'Unboxing day';
    case 'founder-story':
      return b.started
        ? `Why I started ${b.started.split(/\s+/).length > 2 ? `this ${b.started.split(/\s+/).at(-1)}` : b.started}`
        : 'Why I started this';
    case 'green-screen-reaction':
      return 'You need to see this';
    default:
      return b.period ? `My honest review after ${b.period}` : 'My honest review';
  }
}
