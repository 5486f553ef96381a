// recommend_voice: ranks the workspace's voices (built-in and ready custom clones, as GET /assets
// lists them) for a script, a language and a style. Deterministic and explainable: a language
// score (locale match, the language detected from the script when none is given) and a style
// score (the style's words against each voice's style tags, summary, gender and age), each
// voice with a score from 0 to 1 and a one-line reason.
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { workspaceAssets } from './assets.ts';

type Schemas = components['schemas'];

/** recommend_voice: the workspace's voices ranked for the arguments, best first (at most `limit`, default 5). */
export async function recommendVoices(
  ctx: AppContext,
  orgId: string,
  args: Schemas['RecommendVoiceInput'],
): Promise<Schemas['VoiceRecommendations']> {
  const { voices } = await workspaceAssets(ctx.db, orgId, ctx.config.publicBaseUrl, ctx.storage);
  const ranked = rankVoices(voices, { script: args.script, language: args.language, style: args.style });
  return { object: 'voice_recommendations', data: ranked.slice(0, args.limit ?? 5) };
}

/** What the ranking reads of a voice (the contract's Voice). */
export type VoiceLike = Pick<
  Schemas['Voice'],
  'id' | 'name' | 'source' | 'locale' | 'gender' | 'age' | 'style_tags' | 'recommendation_summary'
>;

export interface RankedVoice<V> {
  voice: V;
  score: number;
  reason: string;
}

const LANGUAGE_NAMES: Record<string, string> = {
  english: 'en',
  spanish: 'es',
  español: 'es',
  espanol: 'es',
  castilian: 'es',
  german: 'de',
  deutsch: 'de',
  french: 'fr',
  français: 'fr',
  francais: 'fr',
  italian: 'it',
  italiano: 'it',
  portuguese: 'pt',
  português: 'pt',
  portugues: 'pt',
  brazilian: 'pt',
  japanese: 'ja',
  日本語: 'ja',
  hindi: 'hi',
  हिन्दी: 'hi',
  dutch: 'nl',
  chinese: 'zh',
  mandarin: 'zh',
  korean: 'ko',
  arabic: 'ar',
  russian: 'ru',
};

const REGION_WORDS: Record<string, string> = {
  american: 'US',
  us: 'US',
  usa: 'US',
  british: 'GB',
  uk: 'GB',
  england: 'GB',
  scottish: 'GB',
  mexican: 'MX',
  mexico: 'MX',
  spain: 'ES',
  brazil: 'BR',
  brazilian: 'BR',
  portugal: 'PT',
  india: 'IN',
  indian: 'IN',
  germany: 'DE',
  france: 'FR',
  parisian: 'FR',
  italy: 'IT',
  japan: 'JP',
};

// A few frequent words per language, enough to tell the supported languages apart.
const STOPWORDS: Record<string, string[]> = {
  en: ['the', 'and', 'you', 'your', 'is', 'are', 'with', 'for', 'this', 'that', 'of', 'to', 'in', 'it', 'our', 'get', 'now'],
  es: ['el', 'la', 'los', 'las', 'y', 'es', 'con', 'para', 'tu', 'que', 'de', 'en', 'un', 'una', 'por', 'más', 'nuestro'],
  de: ['der', 'die', 'das', 'und', 'ist', 'mit', 'für', 'dein', 'ihr', 'nicht', 'ein', 'eine', 'zu', 'auf', 'jetzt', 'sie'],
  fr: ['le', 'la', 'les', 'et', 'est', 'avec', 'pour', 'vous', 'votre', 'des', 'une', 'un', 'dans', 'sur', 'nous', 'ce'],
  it: ['il', 'lo', 'gli', 'e', 'è', 'con', 'per', 'tuo', 'che', 'di', 'una', 'un', 'nel', 'sono', 'questo', 'della'],
  pt: ['o', 'os', 'as', 'e', 'é', 'com', 'para', 'você', 'seu', 'sua', 'que', 'de', 'um', 'uma', 'não', 'mais'],
};

// Style words people use → the vocabulary of the voices' tags.
const STYLE_SYNONYMS: Record<string, string[]> = {
  documentary: ['narrative', 'authoritative'],
  narrator: ['narrative'],
  narration: ['narrative'],
  story: ['storytelling', 'narrative'],
  stories: ['storytelling'],
  storyteller: ['storytelling'],
  explainer: ['clear', 'narrative'],
  tutorial: ['clear', 'calm', 'conversational'],
  excited: ['energetic', 'upbeat'],
  exciting: ['energetic'],
  hype: ['energetic', 'upbeat'],
  dynamic: ['energetic'],
  lively: ['lively', 'energetic'],
  punchy: ['energetic', 'upbeat'],
  fun: ['playful'],
  funny: ['playful'],
  cheerful: ['upbeat', 'friendly'],
  happy: ['upbeat'],
  sport: ['sporty'],
  fitness: ['sporty', 'energetic'],
  soothing: ['calm'],
  relaxed: ['calm'],
  relaxing: ['calm'],
  gentle: ['calm', 'warm'],
  soft: ['calm', 'warm'],
  serious: ['authoritative'],
  confident: ['authoritative'],
  trustworthy: ['authoritative', 'classic'],
  corporate: ['professional', 'clear'],
  business: ['professional'],
  premium: ['sophisticated'],
  luxury: ['sophisticated', 'chic'],
  elegant: ['sophisticated', 'chic'],
  casual: ['conversational'],
  natural: ['conversational'],
  chatty: ['conversational'],
  approachable: ['friendly'],
  kind: ['warm', 'friendly'],
  expressive: ['expressive'],
};

const GENDER_WORDS: Record<string, string> = {
  female: 'female',
  woman: 'female',
  women: 'female',
  feminine: 'female',
  male: 'male',
  man: 'male',
  men: 'male',
  masculine: 'male',
  neutral: 'neutral',
};
const AGE_WORDS: Record<string, string> = {
  young: 'young',
  youthful: 'young',
  teen: 'young',
  older: 'old',
  old: 'old',
  elderly: 'old',
  mature: 'middle_aged',
  middle: 'middle_aged',
};

const words = (s: string) =>
  s
    .toLowerCase()
    .normalize('NFC')
    .match(/[\p{L}\p{N}]+/gu) ?? [];

interface Wanted {
  lang: string | undefined;
  region: string | undefined;
  detected: boolean;
}

export function detectLanguage(script: string): string | undefined {
  if (/[\u3040-\u30ff]/.test(script)) return 'ja';
  if (/[\u0900-\u097f]/.test(script)) return 'hi';
  const ws = words(script);
  let best: string | undefined;
  let bestHits = 0;
  for (const [lang, list] of Object.entries(STOPWORDS)) {
    const set = new Set(list);
    const hits = ws.filter((w) => set.has(w)).length;
    if (hits > bestHits) {
      best = lang;
      bestHits = hits;
    }
  }
  return bestHits >= 2 ? best : undefined;
}

export function parseLanguage(language: string | undefined, script: string): Wanted {
  if (language?.trim()) {
    const raw = language.trim();
    const m = /^([A-Za-z]{2,3})(?:[-_]([A-Za-z]{2}|\d{3}))?$/.exec(raw);
    if (m && !(m[1].toLowerCase() in LANGUAGE_NAMES)) return { lang: m[1].toLowerCase(), region: m[2]?.toUpperCase(), detected: false };
    let lang: string | undefined;
    let region: string | undefined;
    for (const w of words(raw)) {
      lang ??= LANGUAGE_NAMES[w];
      region ??= REGION_WORDS[w];
    }
    if (lang) return { lang, region, detected: false };
  }
  return { lang: detectLanguage(script), region: undefined, detected: true };
}

function languageScore(v: VoiceLike, want: Wanted): { score: number; note: string } {
  if (!want.lang) return { score: 0.5, note: `speaks ${v.locale.join(', ')}` };
  const exact = want.region && v.locale.find((l) => l.toLowerCase() === `${want.lang}-${want.region}`.toLowerCase());
  if (exact) return { score: 1, note: `speaks ${exact}` };
  const same = v.locale.find((l) => l.split('-')[0].toLowerCase() === want.lang);
  const label = `${want.lang}${want.region ? `-${want.region}` : ''}${want.detected ? ', detected from the script' : ''}`;
  if (same) return { score: want.region ? 0.85 : 1, note: `speaks ${same} (${label})` };
  return { score: 0, note: `speaks ${v.locale.join(', ')}, not ${label}` };
}

function styleScore(v: VoiceLike, style: string | undefined): { score: number; matched: string[] } {
  const asked = words(style ?? '').filter((w) => w.length > 2 || w in GENDER_WORDS);
  if (asked.length === 0) return { score: 0.5, matched: [] };
  const tags = new Set(v.style_tags.map((t) => t.toLowerCase()));
  const summary = new Set(words(v.recommendation_summary));
  const matched: string[] = [];
  let total = 0;
  let counted = 0;
  for (const w of asked) {
    const stem = w.replace(/(ly|ing|ed|s)$/, '');
    const candidates = [w, stem, ...(STYLE_SYNONYMS[w] ?? []), ...(STYLE_SYNONYMS[stem] ?? [])];
    let hit = 0;
    if (GENDER_WORDS[w]) hit = GENDER_WORDS[w] === v.gender ? 1 : 0;
    else if (AGE_WORDS[w]) hit = AGE_WORDS[w] === v.age ? 1 : 0;
    else if (candidates.some((c) => tags.has(c))) hit = 1;
    else if (candidates.some((c) => summary.has(c) || [...summary].some((s) => c.length > 3 && s.startsWith(c)))) hit = 0.6;
    else if (REGION_WORDS[w] || LANGUAGE_NAMES[w]) continue; // a language word in the style: scored by language
    counted++;
    total += hit;
    if (hit > 0) matched.push(w);
  }
  return { score: counted ? total / counted : 0.5, matched };
}

/** Voices best first; ties keep the input order (built-in, then custom, as GET /assets lists them). */
export function rankVoices<V extends VoiceLike>(
  voices: V[],
  opts: { script: string; language?: string; style?: string },
): RankedVoice<V>[] {
  const want = parseLanguage(opts.language, opts.script);
  if (!want.region && opts.style) {
    for (const w of words(opts.style)) want.region ??= REGION_WORDS[w];
  }
  const ranked = voices.map((voice, i) => {
    const lang = languageScore(voice, want);
    const style = styleScore(voice, opts.style);
    const own = voice.source === 'custom_clone' ? 0.03 : 0;
    const score = Math.min(1, Math.round((0.6 * lang.score + 0.4 * style.score + own) * 1000) / 1000);
    const parts = [`${voice.name} ${lang.note}`];
    if (opts.style)
      parts.push(
        style.matched.length
          ? `matches "${style.matched.join(', ')}" (${voice.style_tags.join(', ')})`
          : `style ${voice.style_tags.join(', ')}`,
      );
    if (own) parts.push("the workspace's own cloned voice");
    const reason = `${parts.join('; ')}.`.slice(0, 500);
    return { voice, score, reason, i };
  });
  ranked.sort((a, b) => b.score - a.score || a.i - b.i);
  return ranked.map(({ voice, score, reason }) => ({ voice, score, reason }));
}
