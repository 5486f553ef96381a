// Every object key of the service, made and read here only (after supabase/storage's locator.ts:
// one place knows where an object lives; callers name what they store, never a path). A key
// layout is written once below, as a pattern of named segments; the function that makes such a
// key and parseKey, which reads one back, both come from it. Stored objects are found by these
// keys, so a layout never changes: objects stored before must still be found (test/storage/keys.test.ts
// pins every layout byte for byte).
//
// Workspace objects are `<prefix><org id>/…` (the orphan sweep lists each prefix and asks the
// table that owns it; services/assets/orphaned-media.ts). Shared objects (sound effects, catalog
// samples) belong to no workspace and are made again when missing.

/** A segment of a key: a workspace id, a resource id, an index, an extension (never a "/"). */
type Segment = string | number;

interface Layout<Name extends string> {
  /** The pattern: literal text and `{name}` segments; a segment never holds a "/". */
  pattern: string;
  names: readonly Name[];
}

const layout = <const Name extends string>(pattern: string, names: readonly Name[]): Layout<Name> => ({ pattern, names });

/** The layouts, by kind of object. */
const LAYOUTS = {
  /** The output of a generation (image or video). */
  generationOutput: layout('generations/{orgId}/{generationId}.{ext}', ['orgId', 'generationId', 'ext']),
  /** What a template generation's model made (hero image, footage), kept until it is composited. */
  generationModelOutput: layout('generations/{orgId}/model-outputs/{generationId}.{ext}', ['orgId', 'generationId', 'ext']),
  /** A scene image of a faceless video; `scene` counts from 1. */
  facelessScene: layout('faceless/{orgId}/{videoId}/scene-{scene}.jpg', ['orgId', 'videoId', 'scene']),
  /** A scene clip of a faceless video (normalised to the frame and the scene's length); `scene` counts from 1. */
  facelessClip: layout('faceless/{orgId}/{videoId}/clip-{scene}.mp4', ['orgId', 'videoId', 'scene']),
  /** The caption scrim and brand laid over a faceless video's clips. */
  facelessOverlay: layout('faceless/{orgId}/{videoId}/overlay.png', ['orgId', 'videoId']),
  facelessVoiceover: layout('faceless/{orgId}/{videoId}/voiceover.wav', ['orgId', 'videoId']),
  facelessMusic: layout('faceless/{orgId}/{videoId}/music.wav', ['orgId', 'videoId']),
  facelessVideo: layout('faceless/{orgId}/{videoId}/video.mp4', ['orgId', 'videoId']),
  /** A slide of a slideshow; `index` counts from 0. */
  slideshowSlide: layout('slideshows/{orgId}/{slideshowId}/slide-{index}.png', ['orgId', 'slideshowId', 'index']),
  slideshowVideo: layout('slideshows/{orgId}/{slideshowId}/carousel.mp4', ['orgId', 'slideshowId']),
  editorExport: layout('editor-exports/{orgId}/{exportId}.mp4', ['orgId', 'exportId']),
  /** A file of the media library (uploads, URL imports, synthesized voiceovers, fetched references). */
  editorMedia: layout('editor-media/{orgId}/{mediaId}.{ext}', ['orgId', 'mediaId', 'ext']),
  brandKitLogo: layout('brand-kits/{orgId}/{logoId}.{ext}', ['orgId', 'logoId', 'ext']),
  customAvatar: layout('avatars/{orgId}/{avatarId}.png', ['orgId', 'avatarId']),
  customVoiceSample: layout('voices/{orgId}/{voiceId}.{ext}', ['orgId', 'voiceId', 'ext']),
  soundEffect: layout('sound-effects/{effectId}.wav', ['effectId']),
  /** A catalog sample at its preview path (`voices/<id>.wav`, `avatars/<id>.mp4`: two segments). */
  catalogSample: layout('catalog-samples/{dir}/{file}', ['dir', 'file']),
} as const;

export type KeyLayout = keyof typeof LAYOUTS;
type NamesOf<L extends KeyLayout> = (typeof LAYOUTS)[L]['names'][number];
export type KeyParts<L extends KeyLayout> = { [N in NamesOf<L>]: string };

function make<L extends KeyLayout>(which: L, parts: Record<NamesOf<L>, Segment>): string {
  const { pattern } = LAYOUTS[which];
  return pattern.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = String(parts[name as NamesOf<L>]);
    if (!value || value.includes('/')) throw new Error(`Storage key ${which}: ${name} "${value}" is not one key segment`);
    return value;
  });
}

// ------------------------------------------------------------------------------ making keys

export const generationOutputKey = (orgId: string, generationId: string, ext: string) =>
  make('generationOutput', { orgId, generationId, ext });
export const generationModelOutputKey = (orgId: string, generationId: string, ext: string) =>
  make('generationModelOutput', { orgId, generationId, ext });
/** `index` counts from 0 (the scene's position in the script); the key numbers scenes from 1. */
export const facelessSceneKey = (orgId: string, videoId: number, index: number) =>
  make('facelessScene', { orgId, videoId, scene: index + 1 });
export const facelessClipKey = (orgId: string, videoId: number, index: number) =>
  make('facelessClip', { orgId, videoId, scene: index + 1 });
export const facelessOverlayKey = (orgId: string, videoId: number) => make('facelessOverlay', { orgId, videoId });
export const facelessVoiceoverKey = (orgId: string, videoId: number) => make('facelessVoiceover', { orgId, videoId });
export const facelessMusicKey = (orgId: string, videoId: number) => make('facelessMusic', { orgId, videoId });
export const facelessVideoKey = (orgId: string, videoId: number) => make('facelessVideo', { orgId, videoId });
export const slideshowSlideKey = (orgId: string, slideshowId: string, index: number) =>
  make('slideshowSlide', { orgId, slideshowId, index });
export const slideshowVideoKey = (orgId: string, slideshowId: string) => make('slideshowVideo', { orgId, slideshowId });
export const editorExportKey = (orgId: string, exportId: string) => make('editorExport', { orgId, exportId });
export const editorMediaKey = (orgId: string, mediaId: string, ext: string) => make('editorMedia', { orgId, mediaId, ext });
export const brandKitLogoKey = (orgId: string, logoId: string, ext: string) => make('brandKitLogo', { orgId, logoId, ext });
export const customAvatarKey = (orgId: string, avatarId: string) => make('customAvatar', { orgId, avatarId });
export const customVoiceSampleKey = (orgId: string, voiceId: string, ext: string) => make('customVoiceSample', { orgId, voiceId, ext });
export const soundEffectKey = (effectId: string) => make('soundEffect', { effectId });
/** `relPath`: the sample's path under the catalog previews (`voices/<id>.wav`, `avatars/<id>.mp4`). */
export function catalogSampleKey(relPath: string): string {
  const [dir, file, ...rest] = relPath.split('/');
  if (rest.length) throw new Error(`Storage key catalogSample: "${relPath}" is not <dir>/<file>`);
  return make('catalogSample', { dir, file });
}

// ----------------------------------------------------------------------------- reading keys

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const PARSERS = (Object.keys(LAYOUTS) as KeyLayout[]).map((which) => {
  const source = LAYOUTS[which].pattern
    .split(/(\{\w+\})/)
    // An extension is what follows the last dot (an id before it may hold dots, never a "/").
    .map((part) => (/^\{\w+\}$/.test(part) ? `(?<${part.slice(1, -1)}>${part === '{ext}' ? '[^/.]+' : '[^/]+'})` : escapeRe(part)))
    .join('');
  return { which, re: new RegExp(`^${source}$`) };
});

export type ParsedKey = { [L in KeyLayout]: { layout: L; parts: KeyParts<L> } }[KeyLayout];

/** Which layout `key` has and its segments (as text), or undefined for a key no layout makes. */
export function parseKey(key: string): ParsedKey | undefined {
  for (const { which, re } of PARSERS) {
    const m = re.exec(key);
    if (m) return { layout: which, parts: { ...m.groups } } as ParsedKey;
  }
  return undefined;
}

/** The prefixes of the workspace layouts (`<prefix><org id>/…`), in the order the sweep walks them. */
export const WORKSPACE_KEY_PREFIXES = {
  generations: 'generations/',
  editorMedia: 'editor-media/',
  editorExports: 'editor-exports/',
  slideshows: 'slideshows/',
  faceless: 'faceless/',
  brandKits: 'brand-kits/',
  avatars: 'avatars/',
  voices: 'voices/',
} as const;

/**
 * The workspace (org id) of an object under a workspace prefix: the segment after the prefix,
 * also for a partial write a killed process left (`<key>.<hex>.tmp`); undefined for shared objects.
 */
export function keyWorkspace(key: string): string | undefined {
  const prefix = Object.values(WORKSPACE_KEY_PREFIXES).find((p) => key.startsWith(p));
  return prefix === undefined ? undefined : key.slice(prefix.length).split('/')[0];
}

/** The last segment of a key: the file name a stored object is recorded and downloaded under. */
export const keyFilename = (key: string): string => key.slice(key.lastIndexOf('/') + 1);
