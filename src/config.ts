// All configuration comes from environment variables, read here and only here.
// Every variable is documented in the README's configuration table.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SocialPlatformValues } from '../generated/enums.ts';

export interface S3Config {
  bucket: string;
  /** Region the client signs for (us-east-1 when unset; most S3-compatible services ignore it). */
  region: string;
  /** Endpoint of an S3-compatible service (http(s) URL); unset: AWS S3 of `region`. */
  endpoint: string | undefined;
  /** Path-style URLs (endpoint/bucket/key) instead of virtual-hosted (bucket.endpoint/key): MinIO and most self-hosted services need it. */
  forcePathStyle: boolean;
  /** Static credentials; unset: the SDK's default chain (AWS_* variables, profile, instance or task role). */
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** Prepended to every key ("" or ending in "/"). */
  prefix: string;
  /** Part size of multipart uploads, in bytes (at least 5 MiB, S3's minimum). */
  partSizeBytes: number;
}

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  publicBaseUrl: string;
  /**
   * Host names /mcp answers besides PUBLIC_BASE_URL's (lower case, no port: DNS-rebinding
   * protection compares names, as the MCP SDK's hostHeaderValidation does; src/mcp/rebinding.ts).
   */
  mcpAllowedHosts: string[];
  /** Origins (`scheme://host[:port]`) a browser page may call /mcp from besides PUBLIC_BASE_URL's. */
  mcpAllowedOrigins: string[];
  /** How long a long MCP tool call with a progress token and no task waits for its work (0: answers at once). */
  mcpToolWaitSeconds: number;
  apiOnly: boolean;
  bodyLimitBytes: number;
  /**
   * Which proxies' X-Forwarded-For to believe for the client IP (Fastify's trustProxy): false
   * (the socket's peer), true (any), a hop count, or addresses/CIDRs.
   */
  trustProxy: boolean | number | string[];
  logLevel: string;
  /** On SIGTERM/SIGINT: how long in-flight requests and running jobs may take to finish before they are cut (jobs released for retry). */
  shutdownGraceSeconds: number;
  demoWorkspace: boolean;
  /** HMAC secret of signed media URLs; unset: one generated and kept in the database (shared by every node). */
  mediaSigningSecret: string | undefined;
  mediaUrlTtlSeconds: number;
  /** AES-256-GCM key (32 bytes) encrypting social account tokens at rest; unset: one generated into DATA_DIR/secrets.key (single node only). */
  secretsKey: Buffer | undefined;
  social: SocialConfig;
  /** Bearer token of GET /metrics (at least 16 characters); unset: no /metrics route (404). */
  metricsToken: string | undefined;
  rateLimitGenerations: number;
  rateLimitWindowSeconds: number;
  /** Media imports from a URL (MCP tool upload_editor_media_from_url) a workspace may make per window. */
  rateLimitMediaImports: number;
  /** Attempts of a generation job after the first, for retryable provider failures. */
  generationRetryLimit: number;
  /** Image generations (static ads, image AI-model outputs) a worker process runs at once. */
  imageConcurrency: number;
  /** Video generations (video renders) a worker process runs at once. */
  videoConcurrency: number;
  /** Reference analyses a worker process runs at once. */
  analysisConcurrency: number;
  /** pg-boss heartbeat: a job whose worker stops heartbeating for this long is retried elsewhere. */
  jobHeartbeatSeconds: number;
  /**
   * How long an idle worker slot waits between looks at its queue when no notification woke it:
   * the longest a job waits past its due time (a retry's backoff, a job released by a lost worker).
   */
  jobPollSeconds: number;
  /**
   * pg-boss supervision and monitoring pass: expires jobs past their deadline, fails stopped
   * heartbeats, and counts the queues (job_queue_depth is at most this old, plus half of it cached).
   */
  jobSuperviseSeconds: number;
  provider: ProviderConfig;
  /** A self-hosted ComfyUI server making image and video models (unset URL: none). */
  comfyui: ComfyuiConfig;
  /**
   * IP addresses the guarded outbound client may reach although they are private or
   * loopback. Empty in production; tests use it for local fixture servers.
   */
  outboundAllowIps: string[];
  /** Total deadline of one guarded outbound fetch made while a client waits (every hop and the body). */
  outboundFetchTimeoutMs: number;
  /** Total deadline of one guarded outbound fetch made by a job (worker). */
  outboundFetchJobTimeoutMs: number;
  /** Deadline of one OCR run of the reference analysis (REFERENCE_OCR_TIMEOUT_MS). */
  referenceOcrTimeoutMs: number;
  /** Size cap of one guarded outbound fetch whose caller sets none of its own. */
  outboundFetchMaxBytes: number;
  /** OAuth authorization server of /mcp: lifetimes in seconds. */
  oauth: OAuthConfig;
  /** Speech-to-text provider of the editor's generate_captions_from_items (unset: none). */
  transcription: TranscriptionConfig;
  /** Copy writer of faceless scripts and slideshow copy: an OpenAI-compatible chat API, or local (url unset). */
  writer: WriterConfig;
  /** Text-to-speech over an OpenAI-compatible audio API (unset url: not used). */
  speech: SpeechProviderConfig;
  /** Text-to-speech by ElevenLabs (unset key: not used). */
  elevenlabs: ElevenLabsConfig;
  /** Text-to-speech on fal's queue (FAL_KEY, FAL_QUEUE_BASE; unset model: not used). */
  falSpeech: FalSpeechConfig;
  /** Editor exports (timeline renders) a worker process runs at once. */
  exportConcurrency: number;
  /** Slideshows (slide renders and the carousel MP4) a worker process makes at once. */
  slideshowConcurrency: number;
  /** Faceless videos a worker process makes at once. */
  facelessConcurrency: number;
  /**
   * What a faceless video's scenes are made from (FACELESS_SCENE_SOURCE): drawn here, stock photos
   * found for each scene's text, or pictures of the image model FACELESS_IMAGE_MODEL; or clips:
   * stock videos found for each scene's text (stock_video), or clips of the video model
   * FACELESS_VIDEO_MODEL (video_model).
   */
  facelessSceneSource: FacelessSceneSource;
  /** The AI image model (catalog slug) that makes a slideshow's slide pictures (SLIDESHOW_IMAGE_MODEL; unset: drawn here). */
  slideshowImageModel: string | undefined;
  /** The AI image model (catalog slug) that makes faceless scenes with FACELESS_SCENE_SOURCE=image_model (FACELESS_IMAGE_MODEL). */
  facelessImageModel: string | undefined;
  /**
   * The AI video model (catalog slug) that makes faceless scene clips with
   * FACELESS_SCENE_SOURCE=video_model (FACELESS_VIDEO_MODEL).
   */
  facelessVideoModel: string | undefined;
  /** Stock media providers (the stock capability, src/engines/stock/); a key unset: that provider is not used. */
  stock: StockConfig;
  /** Largest editor upload (multipart; JSON uploads are also capped at 25 MB decoded). */
  editorUploadMaxBytes: number;
  /** Address-space limit of each ffmpeg/ffprobe process, in MiB (0: none). */
  ffmpegMaxMemoryMb: number;
  /** Most pixels (width × height) of an image or video frame a user supplies. */
  mediaMaxPixels: number;
  /** Most pixels per side of an image or video frame a user supplies. */
  mediaMaxDimension: number;
  /** Longest editor timeline (and so the longest export), in seconds. */
  editorMaxTimelineSeconds: number;
  /** Queued plus rendering exports one workspace may have at once. */
  exportsInFlightPerWorkspace: number;
  /** Seconds of export output one workspace may queue per rolling 24 hours. */
  exportSecondsPerDay: number;
  /** How long a client may take to send a request and to take its answer (slow clients are cut; see src/http/timeouts.ts and drain.ts). */
  timeouts: TimeoutConfig;
  /** Media, catalog sample and preview downloads one client address may have in progress at once (0: no cap). */
  maxConcurrentDownloadsPerAddress: number;
  /** Completion webhooks: delivery retries, timeout and worker slots. */
  webhooks: WebhookConfig;
  /** Where stored media live (STORAGE): DATA_DIR/media, or an S3-compatible bucket (src/storage/). */
  storage: StorageConfig;
}

export interface WebhookConfig {
  /** Retries of a delivery after its first attempt (with the delays below: about a day in all). */
  retryLimit: number;
  /** The first retry's delay; each further one doubles (pg-boss backoff, with jitter), up to retryDelayMaxSeconds. */
  retryDelaySeconds: number;
  retryDelayMaxSeconds: number;
  /** Total deadline of one delivery attempt (connect, TLS, request and answer). */
  timeoutMs: number;
  /** Deliveries a worker process sends at once. */
  concurrency: number;
}

export type StorageConfig = { kind: 'local' } | { kind: 's3'; s3: S3Config };

export interface TimeoutConfig {
  /** The request line and headers must arrive within this (Node's headersTimeout). */
  headersSeconds: number;
  /** A body that is not multipart must arrive whole within this after the headers. */
  bodySeconds: number;
  /** A multipart upload sending no bytes for this long is cut. */
  uploadIdleSeconds: number;
  /** A multipart upload must average at least this many bytes/s once bodySeconds have passed (0: no minimum). */
  uploadMinBytesPerSecond: number;
  /** Every request (headers and body, uploads included) must arrive within this (Node's requestTimeout). */
  requestSeconds: number;
  /**
   * A connection with no traffic either way for this long is closed (socket timeout; 0: none); one
   * whose answer is being written is reset when the client accepts no byte of it for this long.
   */
  connectionSeconds: number;
  /** An answer still being written after this much time waiting on the client must average responseMinBytesPerSecond. */
  responseDrainSeconds: number;
  /** The least average rate at which a client must take an answer once responseDrainSeconds have passed (0: no minimum). */
  responseMinBytesPerSecond: number;
}

export interface TranscriptionConfig {
  /** Base URL of an OpenAI-compatible speech-to-text API (POST {url}/audio/transcriptions); unset: no provider. */
  url: string | undefined;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
}

/** Catalog voice ids (or `female`, `male`, `default`) → a provider's voice (SPEECH_VOICES, ELEVENLABS_VOICES, FAL_SPEECH_VOICES). */
export type VoiceMap = Record<string, string>;

export interface SpeechProviderConfig {
  /** Base URL of an OpenAI-compatible text-to-speech API (POST {url}/audio/speech); unset: not used. */
  url: string | undefined;
  apiKey: string | undefined;
  model: string;
  /** What the server is asked to answer (both converted to 22.05 kHz mono WAV). */
  responseFormat: 'wav' | 'mp3';
  /** Deadline of one request (also ElevenLabs'). */
  timeoutMs: number;
  voices: VoiceMap;
}

export interface ElevenLabsConfig {
  baseUrl: string;
  key: string | undefined;
  model: string;
  timeoutMs: number;
  voices: VoiceMap;
}

/** The fal TTS endpoints the speech engine speaks the input of (src/engines/speech/fal.ts). */
export const FAL_SPEECH_MODEL = /^fal-ai\/(kokoro\/[a-z-]+|elevenlabs\/tts\/[a-z0-9.-]+)$/;

export interface FalSpeechConfig {
  /** FAL_SPEECH_MODEL: a fal-ai/kokoro/… or fal-ai/elevenlabs/tts/… endpoint id; unset: fal does not speak. */
  model: string | undefined;
  /** Deadline of one narration chunk on fal's queue, submit to result (SPEECH_TIMEOUT_MS). */
  timeoutMs: number;
  voices: VoiceMap;
}

export interface WriterConfig {
  /** Base URL of an OpenAI-compatible chat-completions API (POST {url}/chat/completions); unset: the local writer. */
  url: string | undefined;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
}

export interface OAuthConfig {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  codeTtlSeconds: number;
  /** Sign-in session of a browser on the authorization pages. */
  sessionTtlSeconds: number;
  /** How long an API node reuses a resolved /mcp bearer token (0: resolve on every request). */
  mcpAuthCacheSeconds: number;
  /** Client registrations (POST /oauth/register) per client IP per hour. */
  registrationsPerHour: number;
  /** Authorization requests (GET /oauth/authorize) per client IP per 15 minutes. */
  authorizationsPer15Min: number;
  /** Failed sign-ins per account (email) per 15 minutes; then the account's sign-in waits. */
  signInFailuresPerAccount: number;
  /** Failed sign-ins per client IP per 15 minutes, whatever the accounts. */
  signInFailuresPerIp: number;
  /** Total deadline of fetching a client's Client ID Metadata Document (OAUTH_CLIENT_METADATA_TIMEOUT_MS). */
  clientMetadataTimeoutMs: number;
}

/** One generation provider's endpoint and key (the key unset: its models render locally). */
export interface ProviderEndpoint {
  baseUrl: string;
  key: string | undefined;
}

export type FacelessSceneSource = 'image' | 'stock_photo' | 'image_model' | 'stock_video' | 'video_model';
/** The scene sources whose scenes are clips (a stage after the voiceover fetches or makes them). */
export const CLIP_SCENE_SOURCES: ReadonlySet<FacelessSceneSource> = new Set(['stock_video', 'video_model']);

/** Stock media providers, tried in this order; the timeout of one search is PROVIDER_TIMEOUT_MS. */
export interface StockConfig {
  pexels: ProviderEndpoint;
  pixabay: ProviderEndpoint;
}

/** Generation providers, chosen per AI model variant in spec/catalog.yaml (`provider`). */
export interface ProviderConfig {
  replicate: ProviderEndpoint;
  fal: ProviderEndpoint;
  openai: ProviderEndpoint;
  pollMs: number;
  requestTimeoutMs: number;
  jobTimeoutMs: number;
  /**
   * LOCAL_FALLBACK: what a request gets whose catalog model no engine here makes. `preview` (the
   * default): the local engines make it, labelled a preview and priced at the catalog's
   * local_preview_pricing; `off`: a 400 engine_unavailable, nothing charged.
   */
  localFallback: 'preview' | 'off';
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`Environment variable ${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error(`Environment variable ${name} must be a boolean (1/0, true/false), got "${raw}"`);
}

function oneOf<const T extends readonly string[]>(env: NodeJS.ProcessEnv, name: string, values: T, fallback: T[number]): T[number] {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (!values.includes(raw)) throw new Error(`Environment variable ${name} must be one of ${values.join(', ')}, got "${env[name]}"`);
  return raw as T[number];
}

function httpBase(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = (env[name] || fallback).replace(/\/+$/, '');
  try {
    if (!/^https?:$/.test(new URL(raw).protocol)) throw new Error('scheme');
  } catch {
    throw new Error(`Environment variable ${name} must be an http(s) URL, got "${env[name]}"`);
  }
  return raw;
}

function providerConfig(env: NodeJS.ProcessEnv): ProviderConfig {
  // The made-up remote protocol is gone: say so instead of silently rendering locally.
  for (const gone of ['GENERATION_PROVIDER', 'REMOTE_PROVIDER_URL', 'REMOTE_PROVIDER_API_KEY']) {
    if (env[gone] && !(gone === 'GENERATION_PROVIDER' && env[gone]!.trim().toLowerCase() === 'local')) {
      throw new Error(
        `Environment variable ${gone} is no longer read: providers are chosen per AI model in spec/catalog.yaml; set REPLICATE_API_TOKEN, FAL_KEY or OPENAI_API_KEY instead`,
      );
    }
  }
  return {
    replicate: { baseUrl: httpBase(env, 'REPLICATE_API_BASE', 'https://api.replicate.com'), key: env.REPLICATE_API_TOKEN || undefined },
    fal: { baseUrl: httpBase(env, 'FAL_QUEUE_BASE', 'https://queue.fal.run'), key: env.FAL_KEY || undefined },
    openai: { baseUrl: httpBase(env, 'OPENAI_API_BASE', 'https://api.openai.com/v1'), key: env.OPENAI_API_KEY || undefined },
    pollMs: int(env, 'PROVIDER_POLL_MS', 2000, 10, 600_000),
    requestTimeoutMs: int(env, 'PROVIDER_TIMEOUT_MS', 60_000, 100, 600_000),
    jobTimeoutMs: int(env, 'PROVIDER_JOB_TIMEOUT_MS', 30 * 60_000, 200, 24 * 3_600_000),
    localFallback: oneOf(env, 'LOCAL_FALLBACK', ['preview', 'off'] as const, 'preview'),
  };
}

function stockConfig(env: NodeJS.ProcessEnv): StockConfig {
  return {
    pexels: { baseUrl: httpBase(env, 'PEXELS_API_BASE', 'https://api.pexels.com'), key: env.PEXELS_API_KEY || undefined },
    pixabay: { baseUrl: httpBase(env, 'PIXABAY_API_BASE', 'https://pixabay.com/api'), key: env.PIXABAY_API_KEY || undefined },
  };
}

/**
 * FACELESS_SCENE_SOURCE; a stock source needs a stock provider's key, an image-model source
 * FACELESS_IMAGE_MODEL, a video-model source FACELESS_VIDEO_MODEL.
 */
function facelessSceneSource(
  env: NodeJS.ProcessEnv,
  stock: StockConfig,
  models: { image: string | undefined; video: string | undefined },
): FacelessSceneSource {
  const raw = (env.FACELESS_SCENE_SOURCE || 'image').trim().toLowerCase();
  if (raw !== 'image' && raw !== 'stock_photo' && raw !== 'image_model' && raw !== 'stock_video' && raw !== 'video_model') {
    throw new Error(
      `Environment variable FACELESS_SCENE_SOURCE must be "image", "stock_photo", "image_model", "stock_video" or "video_model", got "${env.FACELESS_SCENE_SOURCE}"`,
    );
  }
  if ((raw === 'stock_photo' || raw === 'stock_video') && !stock.pexels.key && !stock.pixabay.key) {
    throw new Error(`FACELESS_SCENE_SOURCE=${raw} needs a stock media provider: set PEXELS_API_KEY or PIXABAY_API_KEY`);
  }
  if (raw === 'image_model' && !models.image) {
    throw new Error(
      'FACELESS_SCENE_SOURCE=image_model needs FACELESS_IMAGE_MODEL: the slug of an AI image model of the catalog (e.g. flux-image)',
    );
  }
  if (raw === 'video_model' && !models.video) {
    throw new Error(
      'FACELESS_SCENE_SOURCE=video_model needs FACELESS_VIDEO_MODEL: the slug of an AI video model of the catalog (e.g. kling-video)',
    );
  }
  return raw;
}

/**
 * SLIDESHOW_IMAGE_MODEL, FACELESS_IMAGE_MODEL: the slug of an AI model of the catalog (unset:
 * none). Whether the catalog has it and it makes images is checked at start-up against the
 * catalog (src/boot/image-models.ts), which this module cannot read.
 */
function imageModelSlug(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (!/^[a-z0-9][a-z0-9._-]{0,159}$/.test(raw))
    throw new Error(`Environment variable ${name} must be the slug of an AI model of the catalog (e.g. flux-image), got "${env[name]}"`);
  return raw;
}

/** What a generation fills in a ComfyUI workflow (COMFYUI_INPUTS maps each to "<node_id>.<input_name>" targets). */
export const COMFYUI_INPUT_NAMES = ['prompt', 'width', 'height', 'seed', 'frames', 'fps', 'image'] as const;
export type ComfyuiInput = (typeof COMFYUI_INPUT_NAMES)[number];
/** A workflow in ComfyUI's API format: node id → {class_type, inputs}. */
export type ComfyuiGraph = Record<string, { class_type: string; inputs: Record<string, unknown>; _meta?: unknown }>;

export interface ComfyuiConfig {
  /** Base URL of the ComfyUI server (COMFYUI_URL); unset: no self-hosted engine. */
  url: string | undefined;
  /** Catalog model names (a variant's `model`) ComfyUI makes, or '*' for every image and video model. */
  models: '*' | string[];
  /** The workflows, read at start-up (COMFYUI_TEXT_TO_IMAGE_WORKFLOW, COMFYUI_IMAGE_TO_VIDEO_WORKFLOW). */
  workflows: { image: ComfyuiGraph; video: ComfyuiGraph } | undefined;
  /** Per workflow, where each input goes ("<node_id>.<input_name>", several allowed); an input left out is not filled. */
  inputs: Record<'image' | 'video', Partial<Record<ComfyuiInput, string[]>>>;
  /** Frames per second of the videos the workflow makes (COMFYUI_VIDEO_FPS): frames = duration × fps. */
  videoFps: number;
}

/** The node inputs the bundled workflows (src/engines/selfhosted/workflows/) take our inputs at. */
const COMFYUI_DEFAULT_INPUTS: Record<ComfyuiInput, string[]> = {
  prompt: ['6.text'],
  width: ['5.width'],
  height: ['5.height'],
  seed: ['3.seed'],
  frames: ['5.length'],
  fps: ['12.fps'],
  image: ['10.image'],
};
/** Inputs a workflow cannot do without: the prompt, and a video's start image. */
const COMFYUI_REQUIRED: Record<'image' | 'video', ComfyuiInput[]> = { image: ['prompt'], video: ['prompt', 'image'] };
const COMFYUI_USED: Record<'image' | 'video', ComfyuiInput[]> = {
  image: ['prompt', 'width', 'height', 'seed'],
  video: [...COMFYUI_INPUT_NAMES],
};

function comfyuiWorkflow(env: NodeJS.ProcessEnv, name: string, bundled: string): ComfyuiGraph {
  const file = env[name] || path.join(import.meta.dirname, 'engines', 'selfhosted', 'workflows', bundled);
  let graph: unknown;
  try {
    graph = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`Environment variable ${name}: cannot read the workflow ${file} as JSON: ${(err as Error).message}`);
  }
  const nodes = graph && typeof graph === 'object' && !Array.isArray(graph) ? Object.entries(graph) : [];
  const bad = nodes.find(
    ([, n]) =>
      !n ||
      typeof n !== 'object' ||
      typeof (n as { class_type?: unknown }).class_type !== 'string' ||
      typeof (n as { inputs?: unknown }).inputs !== 'object',
  );
  if (!nodes.length || bad) {
    throw new Error(
      `Environment variable ${name}: ${file} is not a ComfyUI workflow in API format (an object of nodes, each with class_type and inputs${bad ? `; node ${bad[0]} is not` : ''}); export it with "Save (API)"`,
    );
  }
  return graph as ComfyuiGraph;
}

type ComfyuiTargets = Partial<Record<ComfyuiInput, string[]>>;
/** COMFYUI_INPUTS sections that apply to one workflow only. */
const COMFYUI_SECTIONS = { text_to_image: 'image', image_to_video: 'video' } as const;

/**
 * COMFYUI_INPUTS over the defaults: top-level keys for both workflows, then a `text_to_image` or
 * `image_to_video` object for that workflow alone.
 */
function comfyuiInputs(env: NodeJS.ProcessEnv): ComfyuiConfig['inputs'] {
  const inputs = { image: { ...COMFYUI_DEFAULT_INPUTS }, video: { ...COMFYUI_DEFAULT_INPUTS } };
  if (!env.COMFYUI_INPUTS) return inputs;
  const fail = (why: string) =>
    new Error(
      `Environment variable COMFYUI_INPUTS must be a JSON object mapping ${COMFYUI_INPUT_NAMES.join(', ')} to "<node_id>.<input_name>" (or a list of them, or null), for both workflows or inside "text_to_image" or "image_to_video": ${why}`,
    );
  const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
  let given: unknown;
  try {
    given = JSON.parse(env.COMFYUI_INPUTS);
  } catch {
    throw fail('it is not JSON');
  }
  if (!isObject(given)) throw fail('it is not an object');
  const apply = (into: ComfyuiTargets[], entries: [string, unknown][]) => {
    for (const [key, value] of entries) {
      if (!(COMFYUI_INPUT_NAMES as readonly string[]).includes(key)) throw fail(`"${key}" is not one of them`);
      const targets = value === null ? [] : Array.isArray(value) ? value : [value];
      if (!targets.every((v) => typeof v === 'string' && /^[^.]+\.[^.]+$/.test(v))) throw fail(`"${key}" is ${JSON.stringify(value)}`);
      for (const map of into) {
        if (targets.length) map[key as ComfyuiInput] = targets;
        else delete map[key as ComfyuiInput];
      }
    }
  };
  const entries = Object.entries(given);
  apply(
    [inputs.image, inputs.video],
    entries.filter(([k]) => !(k in COMFYUI_SECTIONS)),
  );
  for (const [section, output] of Object.entries(COMFYUI_SECTIONS)) {
    if (given[section] === undefined) continue;
    if (!isObject(given[section])) throw fail(`"${section}" is not an object`);
    apply([inputs[output]], Object.entries(given[section]));
  }
  return inputs;
}

/** Every mapped input the workflow of `output` uses names a node input it has; the ones it needs are mapped. */
function checkComfyuiTargets(graph: ComfyuiGraph, output: 'image' | 'video', inputs: ComfyuiTargets, name: string): void {
  for (const key of COMFYUI_REQUIRED[output])
    if (!inputs[key])
      throw new Error(`Environment variable COMFYUI_INPUTS maps no node input for "${key}", which the ${output} workflow (${name}) needs`);
  for (const key of COMFYUI_USED[output]) {
    for (const target of inputs[key] ?? []) {
      const [node, input] = target.split('.');
      if (!graph[node] || !(input in graph[node].inputs)) {
        throw new Error(
          `Environment variable COMFYUI_INPUTS maps "${key}" to ${target}, but the ${output} workflow (${name}) has ${graph[node] ? `no input "${input}" on node ${node} (${graph[node].class_type})` : `no node ${node}`}`,
        );
      }
    }
  }
}

function comfyuiConfig(env: NodeJS.ProcessEnv): ComfyuiConfig {
  const videoFps = int(env, 'COMFYUI_VIDEO_FPS', 16, 1, 120);
  const rawModels = (env.COMFYUI_MODELS ?? '*').trim() || '*';
  const models =
    rawModels === '*'
      ? '*'
      : rawModels
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean);
  if (!env.COMFYUI_URL) return { url: undefined, models, workflows: undefined, inputs: { image: {}, video: {} }, videoFps };
  const url = httpBase(env, 'COMFYUI_URL', '');
  const inputs = comfyuiInputs(env);
  const image = comfyuiWorkflow(env, 'COMFYUI_TEXT_TO_IMAGE_WORKFLOW', 'text-to-image.json');
  const video = comfyuiWorkflow(env, 'COMFYUI_IMAGE_TO_VIDEO_WORKFLOW', 'image-to-video.json');
  checkComfyuiTargets(image, 'image', inputs.image, env.COMFYUI_TEXT_TO_IMAGE_WORKFLOW || 'the bundled text-to-image.json');
  checkComfyuiTargets(video, 'video', inputs.video, env.COMFYUI_IMAGE_TO_VIDEO_WORKFLOW || 'the bundled image-to-video.json');
  return { url, models, workflows: { image, video }, inputs, videoFps };
}

function transcriptionConfig(env: NodeJS.ProcessEnv): TranscriptionConfig {
  const url = env.TRANSCRIPTION_PROVIDER_URL ? env.TRANSCRIPTION_PROVIDER_URL.replace(/\/+$/, '') : undefined;
  if (url) {
    try {
      if (!/^https?:$/.test(new URL(url).protocol)) throw new Error('scheme');
    } catch {
      throw new Error(`Environment variable TRANSCRIPTION_PROVIDER_URL must be an http(s) URL, got "${env.TRANSCRIPTION_PROVIDER_URL}"`);
    }
  }
  return {
    url,
    apiKey: env.TRANSCRIPTION_PROVIDER_API_KEY || undefined,
    model: env.TRANSCRIPTION_MODEL || 'whisper-1',
    timeoutMs: int(env, 'TRANSCRIPTION_TIMEOUT_MS', 120_000, 1000, 3_600_000),
  };
}

/** A JSON object of non-empty strings (SPEECH_VOICES, ELEVENLABS_VOICES, FAL_SPEECH_VOICES); unset: empty. */
function voiceMap(env: NodeJS.ProcessEnv, name: string, example: string): VoiceMap {
  const raw = env[name]?.trim();
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new Error(`Environment variable ${name} must be JSON (${(err as Error).message}), e.g. ${example}`);
  }
  const entries = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.entries(parsed) : undefined;
  const bad = entries?.find(([k, v]) => !k.trim() || typeof v !== 'string' || !v.trim());
  if (!entries || bad) {
    throw new Error(
      `Environment variable ${name} must be a JSON object mapping catalog voice ids (or female, male, default) to provider voices, e.g. ${example}${bad ? `; "${bad[0]}" is not mapped to a voice name` : ''}`,
    );
  }
  return Object.fromEntries(entries.map(([k, v]) => [k.trim(), (v as string).trim()]));
}

function speechConfig(env: NodeJS.ProcessEnv): { speech: SpeechProviderConfig; elevenlabs: ElevenLabsConfig; falSpeech: FalSpeechConfig } {
  const timeoutMs = int(env, 'SPEECH_TIMEOUT_MS', 120_000, 1000, 600_000);
  const format = (env.SPEECH_RESPONSE_FORMAT || 'wav').trim().toLowerCase();
  if (format !== 'wav' && format !== 'mp3')
    throw new Error(`Environment variable SPEECH_RESPONSE_FORMAT must be wav or mp3, got "${format}"`);
  return {
    speech: {
      url: env.SPEECH_PROVIDER_URL ? httpBase(env, 'SPEECH_PROVIDER_URL', '') : undefined,
      apiKey: env.SPEECH_PROVIDER_API_KEY || undefined,
      model: env.SPEECH_MODEL || 'tts-1',
      responseFormat: format,
      timeoutMs,
      voices: voiceMap(env, 'SPEECH_VOICES', '{"ava-bright":"nova","male":"onyx"}'),
    },
    elevenlabs: {
      baseUrl: httpBase(env, 'ELEVENLABS_API_BASE', 'https://api.elevenlabs.io'),
      key: env.ELEVENLABS_API_KEY || undefined,
      model: env.ELEVENLABS_MODEL || 'eleven_multilingual_v2',
      timeoutMs,
      voices: voiceMap(env, 'ELEVENLABS_VOICES', '{"ava-bright":"21m00Tcm4TlvDq8ikWAM"}'),
    },
    falSpeech: {
      model: falSpeechModel(env),
      timeoutMs,
      voices: voiceMap(env, 'FAL_SPEECH_VOICES', '{"ava-bright":"af_bella","male":"am_adam"}'),
    },
  };
}

function falSpeechModel(env: NodeJS.ProcessEnv): string | undefined {
  const model = env.FAL_SPEECH_MODEL?.trim();
  if (!model) return undefined;
  if (!FAL_SPEECH_MODEL.test(model))
    throw new Error(
      `Environment variable FAL_SPEECH_MODEL must be a fal Kokoro or ElevenLabs TTS endpoint id (fal-ai/kokoro/<language>, fal-ai/elevenlabs/tts/<model>), e.g. fal-ai/kokoro/american-english, got "${model}"`,
    );
  return model;
}

function writerConfig(env: NodeJS.ProcessEnv): WriterConfig {
  const url = env.SCRIPT_PROVIDER_URL ? env.SCRIPT_PROVIDER_URL.replace(/\/+$/, '') : undefined;
  if (url) {
    try {
      if (!/^https?:$/.test(new URL(url).protocol)) throw new Error('scheme');
    } catch {
      throw new Error(`Environment variable SCRIPT_PROVIDER_URL must be an http(s) URL, got "${env.SCRIPT_PROVIDER_URL}"`);
    }
  }
  return {
    url,
    apiKey: env.SCRIPT_PROVIDER_API_KEY || undefined,
    model: env.SCRIPT_MODEL || 'gpt-4o-mini',
    timeoutMs: int(env, 'SCRIPT_PROVIDER_TIMEOUT_MS', 60_000, 1000, 600_000),
  };
}

function storageConfig(env: NodeJS.ProcessEnv): StorageConfig {
  const kind = (env.STORAGE || 'local').trim().toLowerCase();
  if (kind === 'local') return { kind };
  if (kind !== 's3') throw new Error(`Environment variable STORAGE must be "local" or "s3", got "${env.STORAGE}"`);
  const bucket = env.S3_BUCKET?.trim();
  if (!bucket) throw new Error('STORAGE=s3 needs S3_BUCKET (the name of an existing bucket)');
  const endpoint = env.S3_ENDPOINT ? env.S3_ENDPOINT.replace(/\/+$/, '') : undefined;
  if (endpoint) {
    try {
      if (!/^https?:$/.test(new URL(endpoint).protocol)) throw new Error('scheme');
    } catch {
      throw new Error(`Environment variable S3_ENDPOINT must be an http(s) URL, got "${env.S3_ENDPOINT}"`);
    }
  }
  const accessKeyId = env.S3_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY || undefined;
  if (!accessKeyId !== !secretAccessKey)
    throw new Error('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set both, or neither (the AWS SDK default credential chain)');
  const prefix = (env.S3_PREFIX ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix && !/^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$/.test(prefix))
    throw new Error(`Environment variable S3_PREFIX must be a key prefix of letters, digits, "._/-", got "${env.S3_PREFIX}"`);
  return {
    kind,
    s3: {
      bucket,
      region: env.S3_REGION || 'us-east-1',
      endpoint,
      forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
      accessKeyId,
      secretAccessKey,
      prefix: prefix ? `${prefix}/` : '',
      partSizeBytes: int(env, 'S3_PART_SIZE_MB', 8, 5, 5120) * 1024 * 1024,
    },
  };
}

/** TRUST_PROXY: unset/false, true, a hop count, or a comma-separated list of addresses/CIDRs. */
function trustProxy(raw: string | undefined): boolean | number | string[] {
  const v = (raw ?? '').trim();
  if (v === '' || v === 'false' || v === '0') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  const list = v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const x of list) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(x) && !['loopback', 'linklocal', 'uniquelocal'].includes(x)) {
      throw new Error(`Environment variable TRUST_PROXY must be true, false, a hop count or addresses/CIDRs, got "${raw}"`);
    }
  }
  return list;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(raw: string | undefined): string {
  const level = raw || 'info';
  if (!LOG_LEVELS.includes(level))
    throw new Error(`Environment variable LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
  return level;
}

function timeoutConfig(env: NodeJS.ProcessEnv): TimeoutConfig {
  const t: TimeoutConfig = {
    headersSeconds: int(env, 'HEADERS_TIMEOUT_SECONDS', 20, 1, 3600),
    bodySeconds: int(env, 'BODY_TIMEOUT_SECONDS', 30, 1, 3600),
    uploadIdleSeconds: int(env, 'UPLOAD_IDLE_TIMEOUT_SECONDS', 30, 1, 3600),
    uploadMinBytesPerSecond: int(env, 'UPLOAD_MIN_BYTES_PER_SECOND', 16 * 1024, 0),
    requestSeconds: int(env, 'REQUEST_TIMEOUT_SECONDS', 3600, 1, 24 * 3600),
    connectionSeconds: int(env, 'CONNECTION_TIMEOUT_SECONDS', 120, 0, 24 * 3600),
    responseDrainSeconds: int(env, 'RESPONSE_DRAIN_TIMEOUT_SECONDS', 30, 1, 3600),
    responseMinBytesPerSecond: int(env, 'RESPONSE_MIN_BYTES_PER_SECOND', 16 * 1024, 0),
  };
  if (t.requestSeconds < t.headersSeconds || t.requestSeconds < t.bodySeconds) {
    throw new Error(
      `Environment variable REQUEST_TIMEOUT_SECONDS (${t.requestSeconds}) must be at least HEADERS_TIMEOUT_SECONDS (${t.headersSeconds}) and BODY_TIMEOUT_SECONDS (${t.bodySeconds})`,
    );
  }
  return t;
}

/**
 * Worker slots per queue, by default from the CPU count: image generations take one core each
 * (sharp), video renders more (ffmpeg), exports are long renders (one at a time), analyses mostly
 * wait on the network. WORKER_CONCURRENCY (the variable of the single generation queue), when
 * set, stays the default of both generation queues.
 */
function jobConcurrency(env: NodeJS.ProcessEnv): Pick<Config, 'imageConcurrency' | 'videoConcurrency' | 'analysisConcurrency'> {
  const cores = Math.min(os.availableParallelism(), 64);
  const legacy = env.WORKER_CONCURRENCY ? int(env, 'WORKER_CONCURRENCY', 1, 1, 64) : undefined;
  return {
    imageConcurrency: int(env, 'IMAGE_CONCURRENCY', legacy ?? cores, 1, 64),
    videoConcurrency: int(env, 'VIDEO_CONCURRENCY', legacy ?? Math.max(1, Math.floor(cores / 2)), 1, 64),
    analysisConcurrency: int(env, 'ANALYSIS_CONCURRENCY', 2, 1, 64),
  };
}

/** METRICS_TOKEN: unset or empty means no /metrics; a short one is refused (it guards the process's internals). */
function metricsToken(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (raw.length < 16 || /\s/.test(raw))
    throw new Error('Environment variable METRICS_TOKEN must be at least 16 characters without spaces');
  return raw;
}

export interface SocialConfig {
  /** SOCIAL_API_BASE_<PLATFORM>: replaces scheme and host of every URL that platform's adapter calls (sandboxes, fakes). */
  apiBase: Record<string, string | undefined>;
  /** SOCIAL_<PLATFORM>_CLIENT_ID / _CLIENT_SECRET: the app's OAuth client, for the browser connect flow and refreshing tokens. */
  clients: Record<string, { id: string; secret: string | undefined } | undefined>;
  /** Social publish jobs a worker process runs at once. */
  concurrency: number;
}

function socialConfig(env: NodeJS.ProcessEnv): SocialConfig {
  const apiBase: SocialConfig['apiBase'] = {};
  const clients: SocialConfig['clients'] = {};
  for (const p of SocialPlatformValues) {
    const name = `SOCIAL_API_BASE_${p.toUpperCase()}`;
    const raw = env[name];
    if (raw) {
      let u: URL;
      try {
        u = new URL(raw);
      } catch {
        throw new Error(`Environment variable ${name} must be an absolute http(s) URL, got "${raw}"`);
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`Environment variable ${name} must be an http(s) URL`);
      apiBase[p] = u.origin;
    }
    const id = env[`SOCIAL_${p.toUpperCase()}_CLIENT_ID`];
    if (id) clients[p] = { id, secret: env[`SOCIAL_${p.toUpperCase()}_CLIENT_SECRET`] || undefined };
  }
  return { apiBase, clients, concurrency: int(env, 'SOCIAL_PUBLISH_CONCURRENCY', 2, 1, 32) };
}

/** A comma-separated list of `name`, each entry made canonical by `parse` (undefined: refused, saying `what`). */
function list(env: NodeJS.ProcessEnv, name: string, what: string, parse: (entry: string) => string | undefined): string[] {
  const entries = (env[name] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return entries.map((entry) => {
    const value = parse(entry);
    if (value === undefined) throw new Error(`Environment variable ${name} must list ${what}, separated by commas; "${entry}" is not one`);
    return value;
  });
}

/** A host name (or IP address, IPv6 in brackets) with no port, lower case, without a trailing dot. */
export function hostNameOf(entry: string): string | undefined {
  // No port (a colon outside an IPv6 address's brackets), path, query, fragment or user info.
  if (/[\s/\\?#@]/.test(entry) || entry.replace(/^\[[^\]]*\]/, '').includes(':')) return undefined;
  return URL.parse(`http://${entry}`)?.hostname.replace(/\.$/, '') || undefined;
}

/** An http(s) origin (`scheme://host[:port]`, a trailing slash allowed), as browsers send it. */
function originOf(entry: string): string | undefined {
  const u = URL.parse(entry);
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || u.pathname !== '/' || u.search || u.hash)
    return undefined;
  return u.origin;
}

/** SECRETS_KEY: 32 bytes as 64 hex digits or base64/base64url. */
function secretsKey(raw: string | undefined): Buffer | undefined {
  if (!raw) return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw)
    ? Buffer.from(raw, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw)
      ? Buffer.from(raw, 'base64')
      : undefined;
  if (key?.length !== 32) throw new Error('Environment variable SECRETS_KEY must be 32 bytes, as 64 hex digits or base64');
  return key;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const publicBaseUrl = (env.PUBLIC_BASE_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicBaseUrl);
  } catch {
    throw new Error(`Environment variable PUBLIC_BASE_URL must be an absolute URL, got "${publicBaseUrl}"`);
  }
  const stock = stockConfig(env);
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    publicBaseUrl,
    mcpAllowedHosts: list(env, 'MCP_ALLOWED_HOSTS', 'host names without ports', hostNameOf),
    mcpAllowedOrigins: list(env, 'MCP_ALLOWED_ORIGINS', 'http(s) origins (scheme://host[:port])', originOf),
    mcpToolWaitSeconds: int(env, 'MCP_TOOL_WAIT_SECONDS', 45, 0, 600),
    apiOnly: bool(env, 'API_ONLY', false),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 16 * 1024 * 1024, 1024),
    trustProxy: trustProxy(env.TRUST_PROXY),
    logLevel: logLevel(env.LOG_LEVEL),
    shutdownGraceSeconds: int(env, 'SHUTDOWN_GRACE_SECONDS', 20, 1, 3600),
    demoWorkspace: bool(env, 'DEMO_WORKSPACE', true),
    mediaSigningSecret: env.MEDIA_SIGNING_SECRET || undefined,
    mediaUrlTtlSeconds: int(env, 'MEDIA_URL_TTL_SECONDS', 3600, 1, 7 * 24 * 3600),
    secretsKey: secretsKey(env.SECRETS_KEY),
    social: socialConfig(env),
    metricsToken: metricsToken(env.METRICS_TOKEN),
    rateLimitGenerations: int(env, 'RATE_LIMIT_GENERATIONS', 60, 1),
    rateLimitWindowSeconds: int(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1, 24 * 3600),
    rateLimitMediaImports: int(env, 'RATE_LIMIT_MEDIA_IMPORTS', 30, 1),
    generationRetryLimit: int(env, 'GENERATION_RETRY_LIMIT', 2, 0, 10),
    ...jobConcurrency(env),
    jobHeartbeatSeconds: int(env, 'JOB_HEARTBEAT_SECONDS', 30, 10, 3600),
    jobPollSeconds: int(env, 'JOB_POLL_SECONDS', 5, 1, 600),
    jobSuperviseSeconds: int(env, 'JOB_SUPERVISE_SECONDS', 10, 1, 600),
    provider: providerConfig(env),
    comfyui: comfyuiConfig(env),
    outboundAllowIps: (env.OUTBOUND_ALLOW_IPS ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean),
    outboundFetchTimeoutMs: int(env, 'OUTBOUND_FETCH_TIMEOUT_MS', 30_000, 100, 10 * 60_000),
    outboundFetchJobTimeoutMs: int(env, 'OUTBOUND_FETCH_JOB_TIMEOUT_MS', 120_000, 100, 60 * 60_000),
    referenceOcrTimeoutMs: int(env, 'REFERENCE_OCR_TIMEOUT_MS', 20_000, 100, 10 * 60_000),
    outboundFetchMaxBytes: int(env, 'OUTBOUND_FETCH_MAX_BYTES', 25 * 1024 * 1024, 1024),
    oauth: {
      accessTokenTtlSeconds: int(env, 'OAUTH_ACCESS_TOKEN_TTL_SECONDS', 900, 1, 24 * 3600),
      refreshTokenTtlSeconds: int(env, 'OAUTH_REFRESH_TOKEN_TTL_SECONDS', 30 * 24 * 3600, 1, 365 * 24 * 3600),
      codeTtlSeconds: int(env, 'OAUTH_CODE_TTL_SECONDS', 60, 1, 600),
      sessionTtlSeconds: int(env, 'OAUTH_SESSION_TTL_SECONDS', 8 * 3600, 60, 30 * 24 * 3600),
      mcpAuthCacheSeconds: int(env, 'MCP_AUTH_CACHE_SECONDS', 5, 0, 300),
      registrationsPerHour: int(env, 'RATE_LIMIT_OAUTH_REGISTRATIONS', 60, 1),
      authorizationsPer15Min: int(env, 'RATE_LIMIT_OAUTH_AUTHORIZATIONS', 300, 1),
      signInFailuresPerAccount: int(env, 'RATE_LIMIT_SIGN_IN_FAILURES', 10, 1),
      signInFailuresPerIp: int(env, 'RATE_LIMIT_SIGN_IN_FAILURES_PER_IP', 100, 1),
      clientMetadataTimeoutMs: int(env, 'OAUTH_CLIENT_METADATA_TIMEOUT_MS', 5000, 100, 60_000),
    },
    transcription: transcriptionConfig(env),
    writer: writerConfig(env),
    ...speechConfig(env),
    exportConcurrency: int(env, 'EXPORT_CONCURRENCY', 1, 1, 16),
    slideshowConcurrency: int(env, 'SLIDESHOW_CONCURRENCY', 1, 1, 16),
    facelessConcurrency: int(env, 'FACELESS_CONCURRENCY', 1, 1, 16),
    stock,
    slideshowImageModel: imageModelSlug(env, 'SLIDESHOW_IMAGE_MODEL'),
    facelessImageModel: imageModelSlug(env, 'FACELESS_IMAGE_MODEL'),
    facelessVideoModel: imageModelSlug(env, 'FACELESS_VIDEO_MODEL'),
    facelessSceneSource: facelessSceneSource(env, stock, {
      image: imageModelSlug(env, 'FACELESS_IMAGE_MODEL'),
      video: imageModelSlug(env, 'FACELESS_VIDEO_MODEL'),
    }),
    editorUploadMaxBytes: int(env, 'EDITOR_UPLOAD_MAX_BYTES', 500 * 1024 * 1024, 1024),
    ffmpegMaxMemoryMb: int(env, 'FFMPEG_MAX_MEMORY_MB', 4096, 0),
    mediaMaxPixels: int(env, 'MEDIA_MAX_PIXELS', 40_000_000, 1),
    mediaMaxDimension: int(env, 'MEDIA_MAX_DIMENSION', 16384, 1),
    editorMaxTimelineSeconds: int(env, 'EDITOR_MAX_TIMELINE_SECONDS', 3600, 1, 14400),
    exportsInFlightPerWorkspace: int(env, 'EXPORTS_IN_FLIGHT_PER_WORKSPACE', 2, 1, 1000),
    exportSecondsPerDay: int(env, 'EXPORT_SECONDS_PER_DAY', 36000, 1),
    timeouts: timeoutConfig(env),
    maxConcurrentDownloadsPerAddress: int(env, 'MAX_CONCURRENT_DOWNLOADS_PER_ADDRESS', 16, 0, 100_000),
    webhooks: {
      retryLimit: int(env, 'WEBHOOK_RETRY_LIMIT', 30, 0, 100),
      retryDelaySeconds: int(env, 'WEBHOOK_RETRY_DELAY_SECONDS', 30, 1, 3600),
      retryDelayMaxSeconds: int(env, 'WEBHOOK_RETRY_DELAY_MAX_SECONDS', 3600, 1, 24 * 3600),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 120_000),
      concurrency: int(env, 'WEBHOOK_CONCURRENCY', 4, 1, 64),
    },
    storage: storageConfig(env),
  };
}
