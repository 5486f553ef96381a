// Which engine makes a catalog entry in this deployment, as GET /models shows it, the price rule
// applies it and a generation records it. One rule, read by the catalog (labels and prices), by
// POST /generations (price and refusal, before charging) and by the worker (which engine runs):
//   hosted       the entry names a hosted model (spec/catalog.yaml `provider`) whose provider's
//                key is configured: that model makes it, at the catalog's price;
//   local        otherwise, with LOCAL_FALLBACK=preview (the default): the local engines make a
//                preview of it, labelled so, at the catalog's local_preview_pricing;
//   unavailable  otherwise, with LOCAL_FALLBACK=off: a request for it is a 400
//                engine_unavailable naming the configuration that would make it.
//   self_hosted  before all of these: the operator's ComfyUI server (COMFYUI_URL) makes the catalog
//                models COMFYUI_MODELS names, for the work its workflows do (text to image, image to
//                video), at the catalog's price.
import type { components } from '../../generated/openapi.d.ts';
import type { Config, ProviderConfig } from '../config.ts';
import type { ProviderModel } from './generation.ts';
import { hostedProviderOf } from './index.ts';
import { comfyuiMakes } from './selfhosted/comfyui.ts';

/** The contract's EngineLabel: who makes an entry here (kind unavailable only in the catalog). */
export type EngineLabel = components['schemas']['EngineLabel'];

/** The configuration variable that enables each hosted provider. */
export const PROVIDER_KEY_VARIABLE: Record<ProviderModel['name'], string> = {
  replicate: 'REPLICATE_API_TOKEN',
  fal: 'FAL_KEY',
  openai: 'OPENAI_API_KEY',
};

/** What the catalog says about an entry: what it outputs, the inputs it takes and the hosted model it names, if any. */
export interface CatalogModel {
  output: 'image' | 'video';
  /** The catalog's model name (e.g. veo-3-fast). */
  model: string;
  provider?: ProviderModel;
  /** The AI model variant's inputs (text, image, video, audio); absent: text only. */
  input_mode?: readonly string[];
}

/** The configuration the rule reads: the providers' keys, LOCAL_FALLBACK and the ComfyUI server. */
export interface EngineChoice {
  provider: Pick<ProviderConfig, 'localFallback'> & Partial<ProviderConfig>;
  comfyui?: Config['comfyui'];
}

/**
 * Whether ComfyUI makes the entry here: the model is one it is configured for, and the work is
 * what its workflows do (an image from text only; a video from an image), so no input the
 * request gives goes unused.
 */
function selfHosted(cfg: EngineChoice, entry: CatalogModel): boolean {
  if (!cfg.comfyui || !comfyuiMakes({ comfyui: cfg.comfyui }, entry.model, entry.output)) return false;
  const takesImage = entry.input_mode?.includes('image') ?? false;
  const other = entry.input_mode?.some((m) => m === 'video' || m === 'audio') ?? false;
  return !other && (entry.output === 'image' ? !takesImage : takesImage);
}

/** The local engine that makes an output kind (src/engines/local/ads.ts). */
const LOCAL_MODEL = { image: 'local-image-renderer', video: 'local-video-renderer' } as const;

/** Who makes `entry` under this configuration. */
export function engineOfModel(cfg: EngineChoice, entry: CatalogModel): EngineLabel {
  if (selfHosted(cfg, entry)) return { kind: 'self_hosted', provider: 'comfyui', model: entry.model, preview: false, requires: null };
  const p = entry.provider;
  const requires = p ? PROVIDER_KEY_VARIABLE[p.name] : null;
  if (p && hostedProviderOf(cfg.provider, p)) return { kind: 'hosted', provider: p.name, model: p.model, preview: false, requires: null };
  if (cfg.provider.localFallback === 'preview')
    return { kind: 'local', provider: 'local', model: LOCAL_MODEL[entry.output], preview: true, requires };
  return { kind: 'unavailable', provider: null, model: null, preview: false, requires };
}

/**
 * The price of one output made by `engine`: the catalog's `credits` (at the duration) for a model
 * that makes it, the local preview price for a preview.
 */
export function priceFor(
  engine: EngineLabel,
  output: 'image' | 'video',
  catalogCredits: number,
  durationSeconds: number,
  preview: { image: number; video_per_second: number },
): number {
  if (!engine.preview) return catalogCredits;
  return output === 'image' ? preview.image : preview.video_per_second * durationSeconds;
}
