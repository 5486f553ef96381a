// POST /faceless-videos, resolved: the request (already schema-valid) checked against the catalog
// and the workspace, priced server-side and turned into the spec the faceless job works from.
// Runs as the charged command's `prepare`: every 400/404 here is answered before any charge.
//
// Rules (also in the spec's operation description):
//   - a prompt or a script (non-blank), else 400 naming prompt;
//   - duration 5–180 seconds (400 naming duration); a script must fit it at the fastest
//     narration pace (400 naming script);
//   - language: a name or a BCP 47 tag that some built-in voice speaks (400 naming language);
//   - voice_id: a built-in voice or a ready custom clone of this workspace (404 naming voice_id),
//     whose locales speak the language (400 naming voice_id); default: the first voice speaking it;
//   - brand_kit_id of this workspace (404 naming it); reference_image_urls public (400 naming
//     the URL), at most 10 (the schema);
//   - price: the voice's credits_9_16 / credits_16_9 per started 30 seconds of duration.
// createFacelessVideo: the charged command itself (the `videos` and `faceless_videos` rows and
// the job in one transaction).
import type { components } from '../../../generated/openapi.d.ts';
import { ApiError, badRequest } from '../../errors.ts';
import type { GuardedFetcher } from '../../net/guarded-fetch.ts';
import type { Priced } from '../../services/billing/charged-command.ts';
import type { Tx } from '../../db/client.ts';
import { supportedWriterLanguage } from '../../engines/write/languages.ts';
import { findVoice, loadCatalogData, type RawVoice } from '../../services/catalog/catalog-data.ts';
import { useAsset } from '../../services/assets/asset-use.ts';
import { brandColors } from '../../services/assets/brand-colors.ts';
import type { AppContext } from '../../context.ts';
import { facelessVideos, videos } from '../../db/schema/index.ts';
import { MAX_SPEED, WORDS_PER_SECOND } from './plan.ts';
import { facelessJob } from './job.ts';
import { keyedRequest, runChargedCommand } from '../../services/billing/charged-command.ts';

type S = components['schemas'];
export type CreateFacelessBody = S['CreateFacelessVideoRequest'];
export type ImageStyle = S['FacelessImageStyle'];
export type CaptionStyle = S['CaptionStyle'];
export type AiStyle = S['FacelessAiStyle'];
export type FluxStyle = S['FacelessFluxDevStyle'];

export const MIN_DURATION_SECONDS = 5;
export const MAX_DURATION_SECONDS = 180;
/** The price unit: a voice's credits buy this many seconds (started units count whole). */
export const PRICE_UNIT_SECONDS = 30;

const LANGUAGE_NAMES: Record<string, string> = {
  english: 'en',
  spanish: 'es',
  espanol: 'es',
  español: 'es',
  german: 'de',
  deutsch: 'de',
  french: 'fr',
  français: 'fr',
  francais: 'fr',
  portuguese: 'pt',
  português: 'pt',
  hindi: 'hi',
  japanese: 'ja',
  italian: 'it',
  italiano: 'it',
};

/** Everything the job needs; stored on the row (faceless_videos.spec). */
export interface FacelessSpec {
  title: string;
  prompt: string | null;
  script: string | null;
  aspectRatio: '9:16' | '16:9';
  width: number;
  height: number;
  durationSeconds: number;
  /** ISO 639-1 code of the narration and the locale asked for (e.g. en, en-GB). */
  language: string;
  locale: string;
  voice: { id: string; name: string; espeak: string; locale: string[] };
  imageStyle: ImageStyle;
  aiStyles: AiStyle[];
  fluxStyles: FluxStyle[];
  /** How the captions mark the spoken word (caption_style); absent on videos asked for before it existed: karaoke. */
  captionStyle?: CaptionStyle;
  /** logoUrl: the kit's kit_data.logo_url, drawn on every scene (fetched through the guard); logoKey: an uploaded logo in storage (read, preferred). */
  brandKit?: { id: number; name: string; colors: string[]; logoUrl?: string; logoKey?: string };
  referenceUrls: string[];
}

export interface ResolvedFaceless extends Priced {
  spec: FacelessSpec;
}

/** Credits of a faceless video: the voice's price for the aspect ratio per started 30 s. */
export function facelessPrice(voiceCredits: number, durationSeconds: number): number {
  return voiceCredits * Math.max(1, Math.ceil(durationSeconds / PRICE_UNIT_SECONDS));
}

/** `English`, `en`, `en-GB`, `es_MX` → {code: 'en', locale: 'en-GB'}; undefined when unknown. */
export function parseLanguage(value: string): { code: string; locale: string } | undefined {
  const v = value.trim().toLowerCase();
  if (LANGUAGE_NAMES[v]) return { code: LANGUAGE_NAMES[v], locale: LANGUAGE_NAMES[v] };
  const m = /^([a-z]{2,3})(?:[-_]([a-z0-9]{2,8}))?$/.exec(v);
  if (!m) return undefined;
  return { code: m[1], locale: m[2] ? `${m[1]}-${m[2].toUpperCase()}` : m[1] };
}

const speaks = (locales: readonly string[], code: string) => locales.some((l) => l.toLowerCase().split('-')[0] === code);

const words = (text: string) => (text.match(/[\p{L}\p{N}]+/gu) ?? []).length;

export interface ResolveDeps {
  /** The charged command's transaction: the assets read are locked in it (useAsset). */
  db: Tx;
  fetcher: GuardedFetcher;
}

type AddProblem = (field: string, message: string) => void;
type Language = { code: string; locale: string };
/** The narrating voice and its price for the aspect ratio (per started PRICE_UNIT_SECONDS). */
type ChosenVoice = { voice: FacelessSpec['voice']; voiceCredits: number };

export async function resolveFaceless(deps: ResolveDeps, orgId: string, body: CreateFacelessBody): Promise<ResolvedFaceless> {
  const errors: { field: string; message: string }[] = [];
  const add: AddProblem = (field, message) => errors.push({ field: `body.${field}`, message });
  const { prompt, script, duration } = checkText(deps.fetcher, body, add);
  const voices = loadCatalogData().voices;
  const asked = askedLanguage(body, voices, add);
  if (errors.length) throw badRequest(`Invalid request: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`, errors);

  const aspect = body.aspect_ratio ?? '9:16';
  const { voice, voiceCredits, lang } = await chooseVoice(deps.db, orgId, body, voices, aspect, asked);
  refuseUnwrittenLanguage(script, lang, asked);
  const brandKit = body.brand_kit_id === undefined ? undefined : await useFacelessBrandKit(deps, orgId, body.brand_kit_id);

  const size = aspect === '9:16' ? { width: 1080, height: 1920 } : { width: 1920, height: 1080 };
  const title = body.title?.trim() || (prompt ?? script ?? '').replace(/\s+/g, ' ').slice(0, 80) || 'Faceless video';
  const spec: FacelessSpec = {
    title,
    prompt,
    script,
    aspectRatio: aspect,
    ...size,
    durationSeconds: duration,
    language: lang.code,
    locale: lang.locale,
    voice,
    imageStyle: body.image_style ?? 'cinematic',
    aiStyles: [...(body.selected_ai_styles ?? [])],
    fluxStyles: [...(body.selected_flux_dev_styles ?? [])],
    captionStyle: body.caption_style ?? 'karaoke',
    brandKit,
    referenceUrls: [...(body.reference_image_urls ?? [])],
  };
  return { spec, units: 1, unitCredits: facelessPrice(voiceCredits, duration) };
}

/** The prompt or script (one is needed), the duration (and a script fitting it), the reference URLs' precheck. */
function checkText(
  fetcher: GuardedFetcher,
  body: CreateFacelessBody,
  add: AddProblem,
): { prompt: string | null; script: string | null; duration: number } {
  const prompt = body.prompt?.trim() || null;
  const script = body.script?.trim() || null;
  if (!prompt && !script) add('prompt', 'or script is required (at least one, not blank)');
  const duration = Number(body.duration ?? '26');
  if (!Number.isInteger(duration) || duration < MIN_DURATION_SECONDS || duration > MAX_DURATION_SECONDS) {
    add('duration', `must be ${MIN_DURATION_SECONDS} to ${MAX_DURATION_SECONDS} seconds`);
  } else if (script) {
    const fits = Math.floor(duration * WORDS_PER_SECOND * MAX_SPEED);
    if (words(script) > fits)
      add('script', `has ${words(script)} words; at most ${fits} fit in ${duration} seconds (raise duration or shorten the script)`);
  }
  (body.reference_image_urls ?? []).forEach((u, i) => {
    const problem = fetcher.precheck(u);
    if (problem) add(`reference_image_urls[${i}]`, problem);
  });
  return { prompt, script, duration };
}

/** The language the request asks for, if it asks: one some built-in voice speaks. */
function askedLanguage(body: CreateFacelessBody, voices: readonly RawVoice[], add: AddProblem): Language | undefined {
  if (body.language === undefined) return undefined;
  const lang = parseLanguage(body.language);
  if (!lang || !voices.some((v) => speaks(v.locale, lang.code))) {
    const known = [...new Set(voices.flatMap((v) => v.locale.map((l) => l.split('-')[0])))].join(', ');
    add('language', `is not a language of the built-in voices (${known}, or their names such as English)`);
    return undefined;
  }
  return lang;
}

/**
 * The voice named (which must speak the language asked for; without one, the voice's language is
 * the narration's), else the first built-in voice speaking the language (default English).
 */
async function chooseVoice(
  db: Tx,
  orgId: string,
  body: CreateFacelessBody,
  voices: readonly RawVoice[],
  aspect: '9:16' | '16:9',
  asked: Language | undefined,
): Promise<ChosenVoice & { lang: Language }> {
  if (body.voice_id === undefined) {
    const lang = asked ?? { code: 'en', locale: 'en' };
    const exact = voices.find((v) => v.locale.some((l) => l.toLowerCase() === lang.locale.toLowerCase()));
    const v = exact ?? voices.find((x) => speaks(x.locale, lang.code))!;
    const voice = { id: v.id, name: v.name, espeak: v.espeak_voice, locale: [...v.locale] };
    return { voice, voiceCredits: aspect === '9:16' ? v.credits_9_16 : v.credits_16_9, lang };
  }
  const builtIn = findVoice(body.voice_id);
  const chosen: ChosenVoice = builtIn
    ? {
        voice: { id: builtIn.id, name: builtIn.name, espeak: builtIn.espeak_voice, locale: [...builtIn.locale] },
        voiceCredits: aspect === '9:16' ? builtIn.credits_9_16 : builtIn.credits_16_9,
      }
    : await cloneVoice(db, orgId, body.voice_id, voices, aspect);
  const { voice } = chosen;
  if (asked && !speaks(voice.locale, asked.code)) {
    throw badRequest(`Invalid request: body.voice_id ${voice.id} speaks ${voice.locale.join(', ')}, not ${body.language}`, [
      { field: 'body.voice_id', message: `speaks ${voice.locale.join(', ')}, not the language ${body.language}` },
    ]);
  }
  return { ...chosen, lang: asked ?? { code: voice.locale[0].split('-')[0].toLowerCase(), locale: voice.locale[0] } };
}

/** A ready custom voice clone of the workspace (404 naming voice_id), locked against a delete until the charge commits (useAsset), as the brand kit. */
async function cloneVoice(
  db: Tx,
  orgId: string,
  voiceId: string,
  voices: readonly RawVoice[],
  aspect: '9:16' | '16:9',
): Promise<ChosenVoice> {
  const clone = await useAsset(db, 'voice', orgId, voiceId);
  if (clone?.status !== 'ready') {
    throw new ApiError('not_found', `Voice ${voiceId} is not a voice of GET /assets (voices[].id) in this workspace`, {
      field: 'body.voice_id',
      resource: 'voice',
    });
  }
  // A custom clone is spoken by the built-in voice it was mapped to from its sample (base_voice:
  // language and pitch); clones made before that mapping, by the built-in voice of their language and gender.
  const code = (clone.locale[0] ?? 'en-US').toLowerCase().split('-')[0];
  const mapped = clone.baseVoice ? findVoice(clone.baseVoice) : undefined;
  const match =
    mapped ?? voices.find((v) => speaks(v.locale, code) && v.gender === clone.gender) ?? voices.find((v) => speaks(v.locale, code));
  return {
    voice: { id: clone.id, name: clone.name, espeak: match?.espeak_voice ?? `${code}+f3`, locale: [...clone.locale] },
    voiceCredits: aspect === '9:16' ? clone.credits916 : clone.credits169,
  };
}

/** The copy writer writes every voice language but Japanese (unspaced words cannot be sized): without a script, 400. */
function refuseUnwrittenLanguage(script: string | null, lang: Language, asked: Language | undefined): void {
  if (script || supportedWriterLanguage(lang.code)) return;
  const field = asked ? 'language' : 'voice_id';
  throw badRequest(`Invalid request: body.${field}: scripts in ${lang.code} are not written from a prompt; give the narration as script`, [
    { field: `body.${field}`, message: `speaks ${lang.code}, which the script writer does not write from a prompt; give a script` },
  ]);
}

/** The workspace's brand kit (404 naming it): its colours, and its uploaded logo or a public logo URL. */
async function useFacelessBrandKit(deps: ResolveDeps, orgId: string, id: number): Promise<FacelessSpec['brandKit']> {
  const kit = await useAsset(deps.db, 'brandKit', orgId, id);
  if (!kit)
    throw new ApiError('not_found', `Brand kit ${id} was not found in this workspace`, {
      field: 'body.brand_kit_id',
      resource: 'brand_kit',
    });
  const logo = (kit.kitData as Record<string, unknown> | null)?.logo_url;
  const logoUrl = typeof logo === 'string' && /^https?:\/\//.test(logo) && !deps.fetcher.precheck(logo) ? logo : undefined;
  return {
    id: kit.id,
    name: kit.kitName,
    colors: brandColors(kit.kitData),
    ...(kit.logoKey ? { logoKey: kit.logoKey } : logoUrl ? { logoUrl } : {}),
  };
}

/** POST /faceless-videos. */
export function createFacelessVideo(
  ctx: AppContext,
  orgId: string,
  body: CreateFacelessBody,
  headerKey: string | undefined,
): Promise<S['FacelessVideoGeneration']> {
  return runChargedCommand(ctx, {
    orgId,
    operation: 'createFacelessVideo',
    ...keyedRequest(body, headerKey),
    ledger: { reason: 'faceless_video_charge', reference: (_groupId, [videoId]) => `faceless-video:${videoId}` },
    prepare: (tx) => resolveFaceless({ db: tx, fetcher: ctx.fetcher }, orgId, body),
    enqueue: async (sp, r) => {
      const [v] = await sp.insert(videos).values({ orgId, kind: 'faceless' }).returning({ id: videos.id });
      const jobId = crypto.randomUUID();
      await sp.insert(facelessVideos).values({ videoId: v.id, orgId, title: r.spec.title, spec: r.spec, credits: r.unitCredits, jobId });
      await ctx.queue.sendInTx(sp, facelessJob, { videoId: v.id }, jobId);
      return String(v.id);
    },
    respond: async (_tx, r, o): Promise<S['FacelessVideoGeneration']> => ({
      object: 'faceless_video_generation',
      status: 'queued',
      video_id: Number(o.unitIds[0]),
      title: r.spec.title,
      credits_deducted: o.creditsDeducted,
      remaining_credits: o.remainingCredits,
    }),
    insufficientMessage: (r, required, available) =>
      `This ${r.spec.durationSeconds}-second faceless video with ${r.spec.voice.name} needs ${required} credits and the workspace has ${available}`,
  });
}
