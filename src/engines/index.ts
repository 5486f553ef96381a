// The engine registry: which engine makes each capability, decided from configuration and, for a
// generation, the hosted model its catalog variant names (spec/catalog.yaml `provider`). Stages
// ask `engineFor(capability, { config, fetcher, model })` and never import an engine.
//
//   capability  what is made                                  engines, in the order they are tried
//   write       a faceless script, a slideshow's copy         openai-compatible (SCRIPT_PROVIDER_URL), local
//   image       a generation's picture                        comfyui (COMFYUI_MODELS), replicate, fal, openai (named + keyed), local
//   video       a generation's video                          comfyui (COMFYUI_MODELS), replicate, fal (named + keyed), local
//   lipsync     a lip-sync variant's video                    replicate, fal (named + keyed), local stand-in
//   scene       a faceless video's scene still                local
//   slide       a slideshow's slide                           local
//   speech      narration with word timings                   elevenlabs (ELEVENLABS_API_KEY), fal (FAL_KEY and
//                                                             FAL_SPEECH_MODEL), openai-compatible
//                                                             (SPEECH_PROVIDER_URL), espeak-ng
//   transcribe  words and timings of recorded speech          openai-compatible (TRANSCRIPTION_PROVIDER_URL)
//   stock       licensed stock photos and videos by query     pexels (PEXELS_API_KEY), pixabay (PIXABAY_API_KEY)
//   render      an editor timeline to MP4                     ffmpeg
//
// The first engine whose condition holds is used. Speech: a hosted voice the operator keyed
// (ElevenLabs, then fal, whose FAL_KEY alone never speaks: FAL_SPEECH_MODEL must name its TTS
// endpoint) before an OpenAI-compatible server, often a self-hosted one kept as the fallback. A hosted engine makes a generation when its
// catalog variant names that provider (hostedProviderOf) and the provider's key is configured
// (REPLICATE_API_TOKEN, FAL_KEY, OPENAI_API_KEY; ProviderConfig in src/config.ts and the README),
// and the process has a fetcher for its outputs. A self-hosted ComfyUI server (COMFYUI_URL) makes
// the catalog models COMFYUI_MODELS names (the variant's `model`, passed as `modelName`), before
// any hosted engine: the operator chose it. Every capability but transcribe and stock ends with an
// engine that always can, so a deployment with no configuration works end to end; transcribe and
// stock have no local engine: without TRANSCRIPTION_PROVIDER_URL, or without a stock provider's
// key, engineFor answers undefined. Speech engines that time no words of their own are completed
// by speech/timings.ts (transcribed when a transcribe engine is configured, else estimated).
// Engines are made once per configuration (and fetcher) and shared by every job of the process.
// Each entry of a capability other than image, video and lipsync also says what records call it
// (`label`: kind, provider, model; engine-use.ts): a stage records it (StageContext.madeBy) and
// slideshow and faceless video records show it. A generation's record shows its catalog label.
// A new engine: its file under src/engines/, an entry in REGISTRY below, the configuration it reads.
import type { Config, ProviderConfig } from '../config.ts';
import type { GuardedFetcher } from '../net/guarded-fetch.ts';
import { hostedEngine, localEngine, openAiCompatible, type EngineUse } from './engine-use.ts';
import type { Provider, ProviderJobRef, ProviderModel } from './generation.ts';
import { FalProvider } from './hosted/fal.ts';
import { ComfyuiProvider, comfyuiMakes } from './selfhosted/comfyui.ts';
import type { HostedOptions } from './hosted/hosted.ts';
import { OpenAiImagesProvider } from './hosted/openai-images.ts';
import { ReplicateProvider } from './hosted/replicate.ts';
import type { ImageEngine, SceneEngine, SlideEngine } from './image/types.ts';
import type { LipsyncEngine } from './lipsync/types.ts';
import { LocalProvider } from './local/ads.ts';
import { localScenes } from './local/scene.ts';
import { localSlides } from './local/slide.ts';
import { ffmpegRenderer } from './render/ffmpeg.ts';
import type { RenderEngine } from './render/types.ts';
import { createElevenLabsSpeech } from './speech/elevenlabs.ts';
import { LOCAL_SPEECH, localSpeech } from './speech/local.ts';
import { createFalSpeech } from './speech/fal.ts';
import { createPexels, type StockEngineOptions } from './stock/pexels.ts';
import { createPixabay } from './stock/pixabay.ts';
import type { StockEngine } from './stock/types.ts';
import { createOpenAICompatibleSpeech } from './speech/openai-compatible.ts';
import type { SpeechEngine } from './speech/types.ts';
import { createOpenAICompatibleTranscriber } from './transcribe/openai-compatible.ts';
import type { TranscribeEngine } from './transcribe/types.ts';
import type { VideoEngine } from './video/types.ts';
import { createLocalWriter } from './write/local.ts';
import { createOpenAICompatibleWriter } from './write/openai-compatible.ts';
import type { Writer } from './write/types.ts';

/** The interface of each capability (its types.ts). */
export interface Capabilities {
  write: Writer;
  image: ImageEngine;
  video: VideoEngine;
  lipsync: LipsyncEngine;
  scene: SceneEngine;
  slide: SlideEngine;
  speech: SpeechEngine;
  /** None without TRANSCRIPTION_PROVIDER_URL: there is no local speech-to-text. */
  transcribe: TranscribeEngine | undefined;
  /** None without PEXELS_API_KEY or PIXABAY_API_KEY: there is no local stock library. */
  stock: StockEngine | undefined;
  render: RenderEngine;
}
export type Capability = keyof Capabilities;
/** The capabilities a generation asks for (generationCapability). */
export type GenerationCapability = 'image' | 'video' | 'lipsync';

/** What engines are made from: the configuration and, for hosted outputs, the guarded fetcher (an AppContext fits). */
export interface EngineSetup {
  config: Pick<
    Config,
    | 'provider'
    | 'comfyui'
    | 'writer'
    | 'transcription'
    | 'stock'
    | 'speech'
    | 'elevenlabs'
    | 'falSpeech'
    | 'mediaMaxPixels'
    | 'mediaMaxDimension'
  >;
  /** Downloads hosted outputs; without one, generations are made locally. */
  fetcher?: GuardedFetcher;
  /** A generation's catalog model name (its AI model variant's `model`), which COMFYUI_MODELS lists. */
  modelName?: string;
}

/** One engine of a capability: when it makes the request (always, when absent) and how it is made. */
interface Entry<E> {
  when?: (setup: EngineSetup, model: ProviderModel | undefined) => boolean;
  make: (setup: EngineSetup) => E;
}
/** The capabilities whose records name their engine by the registry's label (a generation's is its catalog EngineLabel). */
export type RecordCapability = Exclude<Capability, GenerationCapability>;
/** An entry of a record capability says what records call it (engine-use.ts). */
interface Labelled<E> extends Entry<E> {
  label: (setup: EngineSetup) => EngineUse;
}

/**
 * The hosted provider that makes a variant whose catalog entry names `model`, under this
 * configuration: its provider when that provider's key is set, else none. The registry's hosted
 * entries select by it, and so does the engine rule of the catalog, POST /generations and the
 * worker (./catalog-engine.ts).
 */
export function hostedProviderOf(
  cfg: Partial<Pick<ProviderConfig, ProviderModel['name']>>,
  model: ProviderModel | undefined,
): ProviderModel['name'] | undefined {
  return model && cfg[model.name]?.key ? model.name : undefined;
}

function hosted(name: ProviderModel['name'], make: (o: HostedOptions) => Provider): Entry<Provider> {
  return {
    when: (s, model) => Boolean(s.fetcher) && hostedProviderOf(s.config.provider, model) === name,
    make: ({ config, fetcher }) =>
      make({
        baseUrl: config.provider[name].baseUrl,
        key: config.provider[name].key!,
        fetcher: fetcher!,
        pollMs: config.provider.pollMs,
        requestTimeoutMs: config.provider.requestTimeoutMs,
        jobTimeoutMs: config.provider.jobTimeoutMs,
        pixelLimits: { maxPixels: config.mediaMaxPixels, maxDimension: config.mediaMaxDimension },
      }),
  };
}

/** The hosted engines by the provider a catalog model names (one instance serves all its capabilities). */
const HOSTED: Record<ProviderModel['name'], Entry<Provider>> = {
  replicate: hosted('replicate', (o) => new ReplicateProvider(o)),
  fal: hosted('fal', (o) => new FalProvider(o)),
  openai: hosted('openai', (o) => new OpenAiImagesProvider(o)),
};
const localRenderer: Entry<Provider> = { make: () => new LocalProvider() };

/** A stock provider, when its key is configured. */
function stock(name: keyof Config['stock'], make: (o: StockEngineOptions) => StockEngine): Labelled<StockEngine> {
  return {
    when: (s) => Boolean(s.config.stock[name].key),
    label: () => hostedEngine(name),
    make: ({ config }) =>
      make({ baseUrl: config.stock[name].baseUrl, key: config.stock[name].key!, requestTimeoutMs: config.provider.requestTimeoutMs }),
  };
}

/** The ComfyUI engine (one instance serves images, videos and cancels). */
const COMFYUI: Entry<Provider> = {
  make: ({ config }) =>
    new ComfyuiProvider({
      config: config.comfyui,
      pollMs: config.provider.pollMs,
      requestTimeoutMs: config.provider.requestTimeoutMs,
      jobTimeoutMs: config.provider.jobTimeoutMs,
      pixelLimits: { maxPixels: config.mediaMaxPixels, maxDimension: config.mediaMaxDimension },
    }),
};
function comfyui(output: 'image' | 'video'): Entry<Provider> {
  return {
    when: (s) => s.modelName !== undefined && comfyuiMakes(s.config, s.modelName, output),
    make: (s) => instance(s, COMFYUI),
  };
}

const REGISTRY: {
  [C in Capability]: readonly (C extends RecordCapability ? Labelled<NonNullable<Capabilities[C]>> : Entry<NonNullable<Capabilities[C]>>)[];
} = {
  write: [
    {
      when: (s) => Boolean(s.config.writer.url),
      make: (s) => createOpenAICompatibleWriter({ ...s.config.writer, url: s.config.writer.url! }),
      label: (s) => openAiCompatible(s.config.writer.url!, s.config.writer.model),
    },
    { make: () => createLocalWriter(), label: () => localEngine('local-writer') },
  ],
  image: [comfyui('image'), HOSTED.replicate, HOSTED.fal, HOSTED.openai, localRenderer],
  video: [comfyui('video'), HOSTED.replicate, HOSTED.fal, localRenderer],
  lipsync: [HOSTED.replicate, HOSTED.fal, localRenderer],
  scene: [{ make: () => localScenes, label: () => localEngine('local-scene-renderer') }],
  slide: [{ make: () => localSlides, label: () => localEngine('local-slide-renderer') }],
  speech: [
    {
      when: (s) => Boolean(s.config.elevenlabs.key),
      make: (s) => createElevenLabsSpeech({ ...s.config.elevenlabs, key: s.config.elevenlabs.key! }),
      label: (s) => hostedEngine('elevenlabs', s.config.elevenlabs.model),
    },
    {
      when: (s) => Boolean(s.fetcher && s.config.provider.fal.key && s.config.falSpeech.model),
      make: ({ config, fetcher }) =>
        createFalSpeech({
          ...config.falSpeech,
          model: config.falSpeech.model!,
          endpoint: { baseUrl: config.provider.fal.baseUrl, key: config.provider.fal.key! },
          pollMs: config.provider.pollMs,
          requestTimeoutMs: config.provider.requestTimeoutMs,
          fetcher: fetcher!,
        }),
      label: (s) => hostedEngine('fal', s.config.falSpeech.model),
    },
    {
      when: (s) => Boolean(s.config.speech.url),
      make: (s) => createOpenAICompatibleSpeech({ ...s.config.speech, url: s.config.speech.url! }),
      label: (s) => openAiCompatible(s.config.speech.url!, s.config.speech.model),
    },
    { make: () => localSpeech, label: () => localEngine(LOCAL_SPEECH) },
  ],
  transcribe: [
    {
      when: (s) => Boolean(s.config.transcription.url),
      make: (s) => createOpenAICompatibleTranscriber({ ...s.config.transcription, url: s.config.transcription.url! }),
      label: (s) => openAiCompatible(s.config.transcription.url!, s.config.transcription.model),
    },
  ],
  stock: [stock('pexels', createPexels), stock('pixabay', createPixabay)],
  render: [{ make: () => ffmpegRenderer, label: () => localEngine('ffmpeg') }],
};

/** Engines made so far, by configuration, then fetcher (or NO_FETCHER), then registry entry. */
const made = new WeakMap<object, WeakMap<object, Map<Entry<unknown>, unknown>>>();
const NO_FETCHER = {};

function instance<E>(setup: EngineSetup, entry: Entry<E>): E {
  let byFetcher = made.get(setup.config);
  if (!byFetcher) made.set(setup.config, (byFetcher = new WeakMap()));
  let engines = byFetcher.get(setup.fetcher ?? NO_FETCHER);
  if (!engines) byFetcher.set(setup.fetcher ?? NO_FETCHER, (engines = new Map()));
  if (!engines.has(entry)) engines.set(entry, entry.make(setup));
  return engines.get(entry) as E;
}

/** The registry entry that makes `capability` under this configuration (the first whose condition holds). */
function entryFor<C extends Capability>(capability: C, setup: EngineSetup & { model?: ProviderModel }) {
  const entries: readonly Entry<Capabilities[C]>[] = REGISTRY[capability];
  return entries.find((e) => !e.when || e.when(setup, setup.model));
}

/** The engine that makes `capability` under this configuration, for a generation the catalog model its variant names. */
export function engineFor<C extends Capability>(capability: C, setup: EngineSetup & { model?: ProviderModel }): Capabilities[C] {
  const entry = entryFor(capability, setup);
  return entry ? instance(setup, entry) : (undefined as Capabilities[C]);
}

/** What a record calls the engine engineFor gives for `capability` here (engine-use.ts); undefined when there is none. */
export function engineUseFor(capability: RecordCapability, setup: EngineSetup): EngineUse | undefined {
  return (entryFor(capability, setup) as Labelled<unknown> | undefined)?.label(setup);
}

/**
 * The capability a generation asks for: its output, or lipsync for a video made from a video and
 * an audio track alone (its AI model variant's catalog input_mode is [video, audio]).
 */
export function generationCapability(output: 'image' | 'video', inputMode?: readonly string[]): GenerationCapability {
  if (output === 'image') return 'image';
  return inputMode?.length === 2 && inputMode.includes('video') && inputMode.includes('audio') ? 'lipsync' : 'video';
}

/** Best effort: stops a hosted job at the provider that runs it, when that provider is configured here. */
export async function cancelHostedJob(setup: EngineSetup, ref: ProviderJobRef): Promise<void> {
  if (ref.provider === 'comfyui') {
    if (setup.config.comfyui.url) await instance(setup, COMFYUI).cancel?.(ref);
    return;
  }
  if (!setup.fetcher || !setup.config.provider[ref.provider].key) return;
  await instance(setup, HOSTED[ref.provider]).cancel?.(ref);
}
