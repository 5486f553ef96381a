// Workspace assets people create: brand kits (colours by role, fonts from the renderers' families,
// an uploaded logo), custom avatars (an uploaded portrait cropped square on the face) and custom
// voices (an uploaded sample, mapped to the closest built-in voice by language and pitch).
// Uploads are JSON base64 (or data URLs): sniffed by their bytes, size- and pixel-limited, stored
// through src/storage/ and served by signed URL. Deleting an asset that a queued or running
// generation, slideshow or faceless video uses is refused (409 conflict); once those jobs end it
// can be deleted (finished results never read the asset again). The check and the delete (or logo
// change) are one step against the charges in flight: asset-use.ts.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { rowId } from '../../db/ids.ts';
import { brandKits, customAvatars, customVoices } from '../../db/schema/index.ts';
import { badRequest, notFound } from '../../errors.ts';
import { inspect, MediaRejected, normalizeType, sniff, type Sniffed } from '../../media/inspect.ts';
import { pixelProblem, type PixelLimits } from '../../media/limits.ts';
import { samplePitch } from '../../media/pitch.ts';
import { facePortrait } from '../../media/portrait.ts';
import { processTempFolder } from '../../media/work-folder.ts';
import type { Storage } from '../../storage/index.ts';
import { brandKitLogoKey, customAvatarKey, customVoiceSampleKey } from '../../storage/keys.ts';
import { loadCatalogData } from '../catalog/catalog-data.ts';
import { changeAsset, deleteUnusedAsset } from './asset-use.ts';
import { decodeInlineData } from '../editor/media.ts';
import sharp from 'sharp';

type S = components['schemas'];

/** Largest logo or portrait upload (decoded bytes). */
export const ASSET_IMAGE_MAX_BYTES = 5 * 1024 * 1024;
/** Largest voice sample upload (decoded bytes). */
export const VOICE_SAMPLE_MAX_BYTES = 10 * 1024 * 1024;
/** Shortest and longest voice sample (seconds). */
export const VOICE_SAMPLE_MIN_SECONDS = 3;
export const VOICE_SAMPLE_MAX_SECONDS = 60;
/** Brand colour roles, in the order they form kit_data.colors (the renderers read that list). */
export const COLOR_ROLES = ['primary', 'secondary', 'accent', 'background', 'text'] as const;
/** Nominal speaking pitch (Hz) of the built-in voices by gender, for the clone mapping. */
const NOMINAL_PITCH: Record<string, number> = { male: 120, neutral: 165, female: 210 };

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);
const AUDIO_FAMILIES: Record<string, string> = {
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/x-m4a': 'm4a',
  'video/mp4': 'm4a',
};

export interface AssetDeps {
  db: Db;
  storage: Storage;
  dataDir: string;
  limits: PixelLimits;
}

export const assetDeps = (ctx: AppContext): AssetDeps => ({
  db: ctx.db,
  storage: ctx.storage,
  dataDir: ctx.config.dataDir,
  limits: { maxPixels: ctx.config.mediaMaxPixels, maxDimension: ctx.config.mediaMaxDimension },
});

const reject = (field: string, message: string, extra: Record<string, unknown> = {}) =>
  badRequest(`Invalid request: ${field} ${message}`, [{ field, message }], extra);

async function sniffAs(bytes: Buffer, field: string): Promise<Sniffed> {
  try {
    return await sniff(bytes);
  } catch (err) {
    if (err instanceof MediaRejected) throw reject(field, err.message);
    throw err;
  }
}

function checkDeclared(declared: string | undefined, sniffed: Sniffed, field: string, family: (t: string) => string | undefined) {
  if (declared && family(normalizeType(declared)) !== family(sniffed.mime)) {
    throw reject(field, `is ${sniffed.mime} by its bytes, not the declared ${declared}`);
  }
}

/** A PNG, JPEG or WebP upload within the size and pixel limits, or a 400 naming `field`. */
export async function receiveImage(
  data: string,
  dataField: string,
  limits: PixelLimits,
): Promise<{ bytes: Buffer; sniffed: Sniffed; width: number; height: number }> {
  const { bytes, dataUrlType } = decodeInlineData(data, dataField, ASSET_IMAGE_MAX_BYTES);
  if (!bytes.length) throw reject(dataField, 'is empty');
  const sniffed = await sniffAs(bytes, dataField);
  if (!IMAGE_TYPES.has(sniffed.mime)) throw reject(dataField, `is ${sniffed.mime}; only PNG, JPEG or WebP images are accepted`);
  checkDeclared(dataUrlType, sniffed, dataField, (t) => t);
  const meta = await sharp(bytes, { limitInputPixels: limits.maxPixels })
    .metadata()
    .catch((err: Error) => {
      if (/exceeds pixel limit/i.test(err.message))
        throw reject(dataField, `has more than ${limits.maxPixels} pixels`, { limit_pixels: limits.maxPixels });
      throw reject(dataField, `could not be decoded as ${sniffed.mime}`);
    });
  if (!meta.width || !meta.height) throw reject(dataField, `could not be decoded as ${sniffed.mime}`);
  const tooBig = pixelProblem(meta.width, meta.height, limits);
  if (tooBig) throw reject(dataField, tooBig, { limit_pixels: limits.maxPixels, limit_dimension: limits.maxDimension });
  return { bytes, sniffed, width: meta.width, height: meta.height };
}

// ---------------------------------------------------------------- brand kits

type BrandKitRow = typeof brandKits.$inferSelect;
type ColorsIn = Partial<Record<(typeof COLOR_ROLES)[number], string>>;
type FontsIn = string[];

/** kit_data of a kit made here: role colours (also as the ordered `colors` list and `<role>_color` keys the renderers read) and fonts. */
function kitData(colors: ColorsIn, fonts: FontsIn, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const norm = Object.fromEntries(COLOR_ROLES.filter((r) => colors[r]).map((r) => [r, colors[r]!.toUpperCase()]));
  return {
    ...extra,
    color_roles: norm,
    colors: COLOR_ROLES.filter((r) => norm[r]).map((r) => norm[r]),
    ...Object.fromEntries(Object.entries(norm).map(([r, c]) => [`${r}_color`, c])),
    fonts: [...fonts],
  };
}

export function brandKitView(storage: Storage, k: BrandKitRow): S['BrandKit'] {
  const data = { ...(k.kitData as Record<string, unknown>) };
  if (k.logoKey) data.logo_url = storage.signedUrl(k.logoKey);
  return {
    id: k.id,
    brand_id: k.brandId,
    kit_name: k.kitName,
    kit_data: data,
    training_status: k.trainingStatus,
    created_at: k.createdAt.toISOString(),
    updated_at: k.updatedAt.toISOString(),
    logo_url: k.logoKey
      ? storage.signedUrl(k.logoKey)
      : typeof data.logo_url === 'string' && /^https?:\/\/\S+$/i.test(data.logo_url)
        ? data.logo_url
        : null,
  };
}

async function storeLogo(deps: AssetDeps, orgId: string, logo: string): Promise<string> {
  const img = await receiveImage(logo, 'body.logo', deps.limits);
  const key = brandKitLogoKey(orgId, randomUUID(), img.sniffed.ext);
  await deps.storage.put(key, img.bytes, img.sniffed.mime);
  return key;
}

/** The workspace's brand kit `id`, or 404 naming `field` (where the id was sent). Every lookup of a brand kit by a caller's id. */
export async function brandKitOf(db: Db, orgId: string, id: number, field = 'path.id'): Promise<BrandKitRow> {
  const missing = () => notFound('Brand kit', id, 'brand_kit', field);
  const [kit] = await db
    .select()
    .from(brandKits)
    .where(and(eq(brandKits.id, rowId(brandKits.id, id, missing)), eq(brandKits.orgId, orgId)));
  if (!kit) throw missing();
  return kit;
}

export async function createBrandKit(deps: AssetDeps, orgId: string, body: S['CreateBrandKitRequest']): Promise<S['BrandKit']> {
  const name = body.name.trim();
  if (!name) throw reject('body.name', 'must contain more than white space');
  const logoKey = body.logo ? await storeLogo(deps, orgId, body.logo) : null;
  const [kit] = await deps.db
    .insert(brandKits)
    .values({ orgId, brandId: 1, kitName: name, kitData: kitData(body.colors ?? {}, body.fonts ?? []), logoKey })
    .returning();
  return brandKitView(deps.storage, kit);
}

export async function listBrandKits(deps: AssetDeps, orgId: string): Promise<BrandKitRow[]> {
  return deps.db.select().from(brandKits).where(eq(brandKits.orgId, orgId)).orderBy(asc(brandKits.id));
}

export async function getBrandKit(deps: AssetDeps, orgId: string, id: number): Promise<S['BrandKit']> {
  return brandKitView(deps.storage, await brandKitOf(deps.db, orgId, id));
}

/** A kit's columns after an update: colours and fonts given replace the kit's whole set; `logoKey` is the logo it keeps or gets. */
function updatedKit(kit: BrandKitRow, body: S['UpdateBrandKitRequest'], logoKey: string | null) {
  const old = kit.kitData as Record<string, unknown>;
  const {
    color_roles: oldRoles,
    colors: _c,
    fonts: oldFonts,
    primary_color: _p,
    secondary_color: _s,
    accent_color: _a,
    background_color: _b,
    text_color: _t,
    ...rest
  } = old;
  const roles: ColorsIn = body.colors ?? ((oldRoles ?? {}) as ColorsIn);
  const fonts: FontsIn = body.fonts ?? (Array.isArray(oldFonts) ? oldFonts.filter((f): f is string => typeof f === 'string') : []);
  const data =
    body.colors !== undefined || body.fonts !== undefined || body.logo === null
      ? kitData(roles, fonts, body.logo === null ? { ...rest, logo_url: undefined } : rest)
      : old;
  return {
    kitName: body.name?.trim() ?? kit.kitName,
    kitData: JSON.parse(JSON.stringify(data)) as unknown,
    logoKey,
    updatedAt: new Date(),
  };
}

export async function updateBrandKit(deps: AssetDeps, orgId: string, id: number, body: S['UpdateBrandKitRequest']): Promise<S['BrandKit']> {
  await brandKitOf(deps.db, orgId, id); // 404 before an upload is stored
  if (body.name !== undefined && !body.name.trim()) throw reject('body.name', 'must contain more than white space');
  const newLogo = body.logo ? await storeLogo(deps, orgId, body.logo) : null;
  let updated: { row: BrandKitRow; replaced: string | null };
  try {
    updated = await changeAsset(deps.db, 'brandKit', orgId, id, async ({ tx, row: kit, refuseIfUsed }) => {
      // Queued and running jobs read the logo they were charged with from storage: it stays until they finish.
      if (body.logo !== undefined && kit.logoKey) await refuseIfUsed('change its logo');
      const logoKey = body.logo === undefined ? kit.logoKey : newLogo;
      const [row] = await tx
        .update(brandKits)
        .set(updatedKit(kit, body, logoKey))
        .where(and(eq(brandKits.id, id), eq(brandKits.orgId, orgId)))
        .returning();
      return { row, replaced: kit.logoKey !== logoKey ? kit.logoKey : null };
    });
  } catch (err) {
    if (newLogo) await deps.storage.delete(newLogo);
    throw err;
  }
  if (updated.replaced) await deps.storage.delete(updated.replaced);
  return brandKitView(deps.storage, updated.row);
}

export async function deleteBrandKit(deps: AssetDeps, orgId: string, id: number): Promise<S['BrandKitDeleted']> {
  const kit = await deleteUnusedAsset(deps.db, 'brandKit', orgId, id);
  if (kit.logoKey) await deps.storage.delete(kit.logoKey);
  return { object: 'brand_kit', id, deleted: true };
}

// ---------------------------------------------------------------- avatars

type AvatarRow = typeof customAvatars.$inferSelect;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function avatarView(storage: Storage, a: AvatarRow): S['Avatar'] {
  const image = a.imageKey ? storage.signedUrl(a.imageKey) : a.imageUrl;
  return { id: a.id, name: a.name, imageUrl: image, videoUrl: a.imageKey ? image : a.videoUrl, isCustom: true };
}

async function avatarOf(db: Db, orgId: string, id: string): Promise<AvatarRow> {
  const [row] = UUID.test(id)
    ? await db
        .select()
        .from(customAvatars)
        .where(and(eq(customAvatars.id, id), eq(customAvatars.orgId, orgId)))
    : [];
  if (!row) throw notFound('Avatar', id, 'avatar');
  return row;
}

export async function createAvatar(deps: AssetDeps, orgId: string, body: S['CreateAvatarRequest']): Promise<S['Avatar']> {
  const name = body.name.trim();
  if (!name) throw reject('body.name', 'must contain more than white space');
  const img = await receiveImage(body.image, 'body.image', deps.limits);
  const { png } = await facePortrait(img.bytes, deps.limits);
  const id = randomUUID();
  const key = customAvatarKey(orgId, id);
  await deps.storage.put(key, png, 'image/png');
  const [row] = await deps.db.insert(customAvatars).values({ id, orgId, name, imageUrl: '', videoUrl: '', imageKey: key }).returning();
  return avatarView(deps.storage, row);
}

export async function listAvatars(deps: AssetDeps, orgId: string): Promise<AvatarRow[]> {
  return deps.db.select().from(customAvatars).where(eq(customAvatars.orgId, orgId)).orderBy(asc(customAvatars.createdAt));
}

export async function updateAvatar(deps: AssetDeps, orgId: string, id: string, body: S['UpdateAvatarRequest']): Promise<S['Avatar']> {
  await avatarOf(deps.db, orgId, id);
  const name = body.name.trim();
  if (!name) throw reject('body.name', 'must contain more than white space');
  const [row] = await deps.db
    .update(customAvatars)
    .set({ name })
    .where(and(eq(customAvatars.id, id), eq(customAvatars.orgId, orgId)))
    .returning();
  return avatarView(deps.storage, row);
}

export async function deleteAvatar(deps: AssetDeps, orgId: string, id: string): Promise<S['AssetDeleted']> {
  const row = await deleteUnusedAsset(deps.db, 'avatar', orgId, id);
  if (row.imageKey) await deps.storage.delete(row.imageKey);
  return { object: 'avatar', id, deleted: true };
}

// ---------------------------------------------------------------- voices

type VoiceRow = typeof customVoices.$inferSelect;

export function customVoiceView(storage: Storage, v: VoiceRow): S['CustomVoice'] {
  return {
    object: 'custom_voice',
    id: v.id,
    name: v.name,
    status: v.status,
    source: 'custom_clone',
    locale: v.locale,
    gender: v.gender,
    base_voice: v.baseVoice,
    pitch_hz: v.pitchHz === null ? null : Math.round(v.pitchHz * 10) / 10,
    preview_url: v.sampleKey ? storage.signedUrl(v.sampleKey) : v.previewUrl || null,
    credits_9_16: v.credits916,
    credits_16_9: v.credits169,
    created_at: v.createdAt.toISOString(),
  };
}

/** The built-in voice closest to a sample: same locale (else same language), then nearest nominal pitch (log scale). */
export function closestVoice(language: string, pitchHz: number) {
  const voices = loadCatalogData().voices;
  const [code] = language.toLowerCase().split('-');
  const exact = voices.filter((v) => v.locale.some((l) => l.toLowerCase() === language.toLowerCase()));
  const same = exact.length ? exact : voices.filter((v) => v.locale.some((l) => l.toLowerCase().split('-')[0] === code));
  if (!same.length) return undefined;
  const distance = (g: string) => Math.abs(Math.log(pitchHz / (NOMINAL_PITCH[g] ?? NOMINAL_PITCH.neutral)));
  return [...same].sort((a, b) => distance(a.gender) - distance(b.gender))[0];
}

async function voiceOf(db: Db, orgId: string, id: string): Promise<VoiceRow> {
  const [row] = UUID.test(id)
    ? await db
        .select()
        .from(customVoices)
        .where(and(eq(customVoices.id, id), eq(customVoices.orgId, orgId)))
    : [];
  if (!row) throw notFound('Voice', id, 'voice');
  return row;
}

export async function createVoice(deps: AssetDeps, orgId: string, body: S['CreateVoiceRequest']): Promise<S['CustomVoice']> {
  const name = body.name.trim();
  if (!name) throw reject('body.name', 'must contain more than white space');
  const language = body.language;
  const known = loadCatalogData().voices;
  if (!known.some((v) => v.locale.some((l) => l.toLowerCase().split('-')[0] === language.toLowerCase().split('-')[0]))) {
    const codes = [...new Set(known.flatMap((v) => v.locale))].join(', ');
    throw reject('body.language', `is not a language of the built-in voices (${codes})`);
  }
  const field = 'body.sample';
  const { bytes, dataUrlType } = decodeInlineData(body.sample, field, VOICE_SAMPLE_MAX_BYTES);
  if (!bytes.length) throw reject(field, 'is empty');
  const sniffed = await sniffAs(bytes, field);
  const ext = AUDIO_FAMILIES[sniffed.mime];
  if (!ext) throw reject(field, `is ${sniffed.mime}; a voice sample must be WAV, MP3 or M4A audio`);
  checkDeclared(dataUrlType, sniffed, field, (t) => AUDIO_FAMILIES[t] ?? (t === 'audio/x-wav' || t === 'audio/wave' ? 'wav' : t));
  const dir = path.join(processTempFolder(deps.dataDir), `voice-${randomUUID()}`);
  await fs.mkdir(dir, { recursive: true });
  try {
    const file = path.join(dir, `sample.${ext}`);
    await fs.writeFile(file, bytes);
    const facts = await inspect(file, sniffed, deps.limits).catch((err: unknown) => {
      if (err instanceof MediaRejected) throw reject(field, err.message);
      throw err;
    });
    if (facts.kind !== 'audio') throw reject(field, `is ${facts.kind}; a voice sample must be audio only`);
    const seconds = facts.durationSeconds ?? 0;
    if (seconds < VOICE_SAMPLE_MIN_SECONDS || seconds > VOICE_SAMPLE_MAX_SECONDS) {
      throw reject(
        field,
        `lasts ${seconds.toFixed(1)} s; a voice sample must last ${VOICE_SAMPLE_MIN_SECONDS} to ${VOICE_SAMPLE_MAX_SECONDS} seconds`,
        {
          duration_seconds: seconds,
        },
      );
    }
    const pitch = await samplePitch({ path: file, type: sniffed.mime }, dir).catch(() => null);
    if (pitch === null) throw reject(field, 'has no voiced sound to analyse (silence or noise only)');
    const base = closestVoice(language, pitch)!;
    const id = randomUUID();
    const key = customVoiceSampleKey(orgId, id, facts.ext);
    await deps.storage.put(key, bytes, facts.contentType);
    const [row] = await deps.db
      .insert(customVoices)
      .values({
        id,
        orgId,
        name,
        status: 'ready',
        previewUrl: '',
        locale: [language],
        gender: base.gender,
        age: base.age,
        styleTags: ['custom'],
        credits916: base.credits_9_16,
        credits169: base.credits_16_9,
        recommendationSummary: `Custom voice spoken by ${base.name} (${base.id}), the built-in ${language} voice closest to the sample's pitch of ${Math.round(pitch)} Hz.`,
        sampleKey: key,
        baseVoice: base.id,
        pitchHz: pitch,
      })
      .returning();
    return customVoiceView(deps.storage, row);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export async function listVoices(deps: AssetDeps, orgId: string): Promise<VoiceRow[]> {
  return deps.db.select().from(customVoices).where(eq(customVoices.orgId, orgId)).orderBy(asc(customVoices.createdAt));
}

export async function getVoice(deps: AssetDeps, orgId: string, id: string): Promise<S['CustomVoice']> {
  return customVoiceView(deps.storage, await voiceOf(deps.db, orgId, id));
}

export async function deleteVoice(deps: AssetDeps, orgId: string, id: string): Promise<S['AssetDeleted']> {
  const row = await deleteUnusedAsset(deps.db, 'voice', orgId, id);
  if (row.sampleKey) await deps.storage.delete(row.sampleKey);
  return { object: 'voice', id, deleted: true };
}
