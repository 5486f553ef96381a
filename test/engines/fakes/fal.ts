// A fake of fal's queue API (https://docs.fal.ai/model-apis/model-endpoints/queue) for the Veo 3
// and Kling 2.1 image-to-video endpoints, refusing what the real one refuses: a key not sent as
// `Authorization: Key …`, an image-to-video request without its required image_url, an
// unknown endpoint, input outside the endpoint's schema (422 {"detail": [{loc, msg, type}]}),
// status/result/cancel paths not under the app root ("fal-ai/veo3", not "fal-ai/veo3/fast";
// "fal-ai/kling-video").
// Answers: submit {request_id, status_url, response_url, cancel_url, queue_position}; status
// IN_QUEUE → IN_PROGRESS → COMPLETED; result {video: {url, content_type, file_name, file_size}}
// (Veo's with a sound track unless generate_audio is false; Kling's silent);
// PUT …/cancel 202 {"status": "CANCELLATION_REQUESTED"}; 429 {"detail"} with Retry-After.
// Behaviour by words in the prompt: "throttle" (first submit 429), "forbidden" (the result is the
// content checker's 422 content_policy_violation), "slow" (never completes).
// Controls: hold() keeps every request in progress (as "slow" does) until its release() is called
// (a worker killed while it polls); `instant` completes a request at its first status poll and
// reuses the footage made for an aspect ratio (benchmarks: the provider's own time near zero).
//
// Also the image-to-video endpoints of these fal model pages, each input checked against the page's
// schema (SCHEMAS below: image_url and prompt required, every value in its documented range, a
// field the page does not list refused as `value_error.extra`, which is stricter than fal, whose
// models may ignore unknown fields: it proves we send only what the model takes); each answers
// silent footage ({video: {url, …}}, as the pages' output schema says) lasting what was asked, in
// the frame asked for, or the first frame's when the aspect ratio is "auto" or not sent:
//   fal-ai/bytedance/seedance/v1/pro/image-to-video   https://fal.ai/models/fal-ai/bytedance/seedance/v1/pro/image-to-video/api
//   fal-ai/bytedance/seedance/v1/lite/image-to-video  https://fal.ai/models/fal-ai/bytedance/seedance/v1/lite/image-to-video/api
//     duration "2".."12" (strings; default "5"), resolution 480p|720p|1080p, aspect_ratio
//     21:9|16:9|4:3|1:1|3:4|9:16|auto (default auto), seed, camera_fixed, enable_safety_checker,
//     end_image_url; Lite also num_frames 29..289. Output {video: File, seed}.
//   fal-ai/minimax/hailuo-02/pro/image-to-video       https://fal.ai/models/fal-ai/minimax/hailuo-02/pro/image-to-video/api
//     prompt, image_url, prompt_optimizer, end_image_url only: 6 s at 1080p, no duration, resolution or seed.
//   fal-ai/minimax/hailuo-02/standard/image-to-video  https://fal.ai/models/fal-ai/minimax/hailuo-02/standard/image-to-video/api
//     also duration "6"|"10" (default "6") and resolution "512P"|"768P" (default "768P"; upper-case P).
//   fal-ai/wan/v2.2-a14b/image-to-video               https://fal.ai/models/fal-ai/wan/v2.2-a14b/image-to-video/api
//     num_frames 17..161 (default 81), frames_per_second 4..60 (default 16), resolution
//     480p|580p|720p (default 720p), aspect_ratio auto|16:9|9:16|1:1 (default auto), seed,
//     negative_prompt, num_inference_steps 2..40, enable_safety_checker, enable_prompt_expansion,
//     end_image_url (the fields the page lists that we could read; its interpolation settings are
//     not modelled). The clip lasts num_frames / frames_per_second.
// Hedra Character-3 is not served by fal (no model page for it), so it has no endpoint here.
//
// Text to speech (outputs {audio: File}, as the model pages and the generated endpoint types of
// carlosdp/fal-rs fal/src/endpoints/fal_ai/{kokoro,elevenlabs/tts}/… say), answering ./tone.ts's
// speech (a FAL_TONE_HZ burst per word: its length follows the text):
//   fal-ai/kokoro/american-english    https://fal.ai/models/fal-ai/kokoro/american-english/llms.txt
//     prompt (string), voice (one of its 20 voices af_heart … am_santa), speed 0.1..5,
//     enable_safety_checker; answers a 24 kHz WAV.
//   fal-ai/elevenlabs/tts/multilingual-v2   https://fal.ai/models/fal-ai/elevenlabs/tts/multilingual-v2/llms.txt
//     text (required), voice (a premade voice's name: Rachel, Aria, Roger, …), stability,
//     similarity_boost, style 0..1, speed 0.7..1.2, timestamps, previous_text, next_text,
//     language_code; answers a 44.1 kHz MP3.
// Lip sync: fal-ai/sync-lipsync/v2 (https://fal.ai/models/fal-ai/sync-lipsync/v2/llms.txt):
//   video_url and audio_url required (URLs or data URIs), model lipsync-2|lipsync-2-pro, sync_mode
//   cut_off|loop|bounce|silence|remap; answers {video: File}: the input video with the input audio
//   as its sound, as long as the shorter of the two (cut_off, the default).
// "throttle", "forbidden" and "slow" are read from a speech request's text as from a prompt;
// "garbled" in it makes the file at the audio URL something that is not audio.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { inputArgs, runFfmpeg } from '../../../src/media/ffmpeg.ts';
import { startFake, type Fake } from './common.ts';
import { toneBytes, toneSpeech } from './tone.ts';

/** The tone fal's speech is made of (./tone.ts). */
export const FAL_TONE_HZ = 550;

const KLING_I2V = ['fal-ai/kling-video/v2.1/standard/image-to-video', 'fal-ai/kling-video/v2.1/pro/image-to-video'];
/** OmniHuman 1.5 (https://fal.ai/models/fal-ai/bytedance/omnihuman/v1.5/api): image_url and audio_url required, prompt and resolution optional. */
const OMNIHUMAN = 'fal-ai/bytedance/omnihuman/v1.5';
/** A field's check: the problem with a value, or undefined when it is fine. */
type Check = (v: unknown) => { msg: string; type: string } | undefined;
const oneOf =
  (...allowed: string[]): Check =>
  (v) =>
    typeof v === 'string' && allowed.includes(v)
      ? undefined
      : { msg: `unexpected value; permitted: ${allowed.map((a) => `'${a}'`).join(', ')}`, type: 'value_error.const' };
const int =
  (min = -(2 ** 31), max = 2 ** 31): Check =>
  (v) =>
    !Number.isInteger(v)
      ? { msg: 'value is not a valid integer', type: 'type_error.integer' }
      : (v as number) < min || (v as number) > max
        ? { msg: `ensure this value is between ${min} and ${max}`, type: 'value_error.number.not_in_range' }
        : undefined;
const bool: Check = (v) =>
  typeof v === 'boolean' ? undefined : { msg: 'value could not be parsed to a boolean', type: 'type_error.bool' };
const str: Check = (v) => (typeof v === 'string' ? undefined : { msg: 'str type expected', type: 'type_error.str' });
const imageUrl: Check = (v) =>
  typeof v === 'string' && /^(https?:|data:image\/)/.test(v) ? undefined : { msg: 'field required', type: 'value_error.missing' };
const seedanceDurations = Array.from({ length: 11 }, (_, k) => String(k + 2));
const SEEDANCE: Record<string, Check> = {
  prompt: str,
  image_url: imageUrl,
  aspect_ratio: oneOf('21:9', '16:9', '4:3', '1:1', '3:4', '9:16', 'auto'),
  resolution: oneOf('480p', '720p', '1080p'),
  duration: oneOf(...seedanceDurations),
  camera_fixed: bool,
  seed: int(-1),
  enable_safety_checker: bool,
  end_image_url: imageUrl,
};
const HAILUO_PRO: Record<string, Check> = { prompt: str, image_url: imageUrl, prompt_optimizer: bool, end_image_url: imageUrl };
/** The documented input of the endpoints checked field by field (required: image_url and prompt). */
const SCHEMAS: Record<string, Record<string, Check>> = {
  'fal-ai/bytedance/seedance/v1/pro/image-to-video': SEEDANCE,
  'fal-ai/bytedance/seedance/v1/lite/image-to-video': { ...SEEDANCE, num_frames: int(29, 289) },
  'fal-ai/minimax/hailuo-02/pro/image-to-video': HAILUO_PRO,
  'fal-ai/minimax/hailuo-02/standard/image-to-video': { ...HAILUO_PRO, duration: oneOf('6', '10'), resolution: oneOf('512P', '768P') },
  'fal-ai/wan/v2.2-a14b/image-to-video': {
    prompt: str,
    image_url: imageUrl,
    num_frames: int(17, 161),
    frames_per_second: int(4, 60),
    resolution: oneOf('480p', '580p', '720p'),
    aspect_ratio: oneOf('auto', '16:9', '9:16', '1:1'),
    seed: int(),
    negative_prompt: str,
    num_inference_steps: int(2, 40),
    enable_safety_checker: bool,
    enable_prompt_expansion: bool,
    end_image_url: imageUrl,
  },
};

const num =
  (min: number, max: number): Check =>
  (v) =>
    typeof v !== 'number'
      ? { msg: 'value is not a valid float', type: 'type_error.float' }
      : v < min || v > max
        ? { msg: `ensure this value is between ${min} and ${max}`, type: 'value_error.number.not_in_range' }
        : undefined;
const mediaUrl =
  (kind: string): Check =>
  (v) =>
    typeof v === 'string' && new RegExp(`^(https?:|data:${kind}/)`).test(v)
      ? undefined
      : { msg: 'field required', type: 'value_error.missing' };
const KOKORO_VOICES = ['heart', 'alloy', 'aoede', 'bella', 'jessica', 'kore', 'nicole', 'nova', 'river', 'sarah', 'sky']
  .map((v) => `af_${v}`)
  .concat(['adam', 'echo', 'eric', 'fenrir', 'liam', 'michael', 'onyx', 'puck', 'santa'].map((v) => `am_${v}`));
/** The premade voices fal's ElevenLabs pages name. */
const ELEVENLABS_NAMES = ['Rachel', 'Aria', 'Roger', 'Sarah', 'Laura', 'Charlie', 'George', 'Callum', 'River', 'Liam', 'Charlotte'];
const KOKORO = 'fal-ai/kokoro/american-english';
const ELEVENLABS_TTS = 'fal-ai/elevenlabs/tts/multilingual-v2';
const LIPSYNC = 'fal-ai/sync-lipsync/v2';
/** The text-to-speech endpoints: their text field, and the audio they answer. */
const TTS: Record<string, { text: string; format: 'wav' | 'mp3'; rate: number }> = {
  [KOKORO]: { text: 'prompt', format: 'wav', rate: 24000 },
  [ELEVENLABS_TTS]: { text: 'text', format: 'mp3', rate: 44100 },
};
/** Required fields of the SCHEMAS endpoints that are not image-to-video (those require prompt and image_url). */
const REQUIRED: Record<string, string[]> = { [KOKORO]: [], [ELEVENLABS_TTS]: ['text'], [LIPSYNC]: ['video_url', 'audio_url'] };
const unit = num(0, 1);
const AUDIO_SCHEMAS: Record<string, Record<string, Check>> = {
  [KOKORO]: { prompt: str, voice: oneOf(...KOKORO_VOICES), speed: num(0.1, 5), enable_safety_checker: bool },
  [ELEVENLABS_TTS]: {
    text: str,
    voice: oneOf(...ELEVENLABS_NAMES),
    stability: unit,
    similarity_boost: unit,
    style: unit,
    speed: num(0.7, 1.2),
    timestamps: bool,
    previous_text: str,
    next_text: str,
    language_code: str,
  },
  [LIPSYNC]: {
    model: oneOf('lipsync-2', 'lipsync-2-pro'),
    video_url: mediaUrl('video'),
    audio_url: mediaUrl('audio'),
    sync_mode: oneOf('cut_off', 'loop', 'bounce', 'silence', 'remap'),
  },
};
Object.assign(SCHEMAS, AUDIO_SCHEMAS);

/** What is wrong with `input` for a SCHEMAS endpoint, as fal's 422 detail lists it. */
function schemaProblems(endpoint: string, input: Record<string, unknown>) {
  const schema = SCHEMAS[endpoint];
  const problems: Array<{ loc: string[]; msg: string; type: string }> = [];
  for (const field of REQUIRED[endpoint] ?? ['prompt', 'image_url'])
    if (input[field] === undefined) problems.push({ loc: ['body', field], msg: 'field required', type: 'value_error.missing' });
  for (const [field, value] of Object.entries(input)) {
    const check = schema[field];
    const problem = check ? check(value) : { msg: 'extra fields not permitted', type: 'value_error.extra' };
    if (problem && value !== undefined) problems.push({ loc: ['body', field], ...problem });
  }
  return problems;
}

/** What is wrong with `input` for the Veo 3, Kling 2.1 and OmniHuman endpoints, as fal's 422 detail lists it. */
function veoKlingOmniProblems(endpoint: string, input: Record<string, any>) {
  const problems: Array<{ loc: string[]; msg: string; type: string }> = [];
  const omni = endpoint === OMNIHUMAN;
  if (omni ? input.prompt !== undefined && typeof input.prompt !== 'string' : typeof input.prompt !== 'string')
    problems.push({ loc: ['body', 'prompt'], msg: 'field required', type: 'value_error.missing' });
  if (omni) {
    for (const [field, kind] of [
      ['image_url', 'image'],
      ['audio_url', 'audio'],
    ] as const)
      if (typeof input[field] !== 'string' || !new RegExp(`^(https?:|data:${kind}/)`).test(input[field]))
        problems.push({ loc: ['body', field], msg: 'field required', type: 'value_error.missing' });
    for (const k of Object.keys(input))
      if (!['image_url', 'audio_url', 'prompt', 'resolution', 'turbo_mode'].includes(k))
        problems.push({ loc: ['body', k], msg: 'extra fields not permitted', type: 'value_error.extra' });
  }
  const kling = KLING_I2V.includes(endpoint);
  // Image-to-video endpoints require image_url (a URL or a data URI), as their input schemas say.
  if (endpoint.endsWith('/image-to-video') && (typeof input.image_url !== 'string' || !/^(https?:|data:image\/)/.test(input.image_url))) {
    problems.push({ loc: ['body', 'image_url'], msg: 'field required', type: 'value_error.missing' });
  }
  if (kling && input.duration !== undefined && !['5', '10'].includes(input.duration))
    problems.push({ loc: ['body', 'duration'], msg: "unexpected value; permitted: '5', '10'", type: 'value_error.const' });
  if (input.aspect_ratio !== undefined && !['16:9', '9:16', '1:1'].includes(input.aspect_ratio))
    problems.push({
      loc: ['body', 'aspect_ratio'],
      msg: "unexpected value; permitted: '16:9', '9:16', '1:1'",
      type: 'value_error.const',
    });
  if (!kling && input.duration !== undefined && !['4s', '6s', '8s'].includes(input.duration))
    problems.push({ loc: ['body', 'duration'], msg: "unexpected value; permitted: '4s', '6s', '8s'", type: 'value_error.const' });
  if (input.resolution !== undefined && !['720p', '1080p'].includes(input.resolution))
    problems.push({ loc: ['body', 'resolution'], msg: "unexpected value; permitted: '720p', '1080p'", type: 'value_error.const' });
  if (!kling && input.generate_audio !== undefined && typeof input.generate_audio !== 'boolean')
    problems.push({ loc: ['body', 'generate_audio'], msg: 'value could not be parsed to a boolean', type: 'type_error.bool' });
  if (input.seed !== undefined && !Number.isInteger(input.seed))
    problems.push({ loc: ['body', 'seed'], msg: 'value is not a valid integer', type: 'type_error.integer' });
  return problems;
}

/** How long a SCHEMAS endpoint's clip lasts for this input, in seconds. */
function clipSeconds(endpoint: string, input: Record<string, any>): number {
  if (endpoint.startsWith('fal-ai/wan/')) return (input.num_frames ?? 81) / (input.frames_per_second ?? 16);
  if (endpoint.includes('/hailuo-02/')) return Number(input.duration ?? 6);
  return Number(input.duration ?? 5);
}

const ENDPOINTS = new Set([
  'fal-ai/veo3/fast',
  'fal-ai/veo3',
  'fal-ai/veo3/fast/image-to-video',
  ...KLING_I2V,
  OMNIHUMAN,
  ...Object.keys(SCHEMAS),
]);
/** The app root an endpoint's /requests/{id} paths live under: its first two segments. */
const rootOf = (endpoint: string) => endpoint.split('/').slice(0, 2).join('/');

export interface FalFake extends Fake {
  requests: Map<string, { id: string; endpoint: string; input: any; polls: number; canceled: boolean }>;
  /** Keeps every request in progress until the returned release() is called. */
  hold(): () => void;
}

export interface FalFakeOptions {
  /** COMPLETED at the first status poll, the footage made once per aspect ratio and sound. */
  instant?: boolean;
}

/** The frame of footage for an aspect ratio, scaled down (longest side 320). */
const SIZES: Record<string, string> = {
  '9:16': '180x320',
  '1:1': '240x240',
  '16:9': '320x180',
  '4:3': '320x240',
  '3:4': '240x320',
  '21:9': '320x136',
};

/** The frame of a first frame (a data URI) scaled down to a longest side of 320, even sides: what "auto" answers. */
async function sizeOfImage(uri: string): Promise<string> {
  const meta = await sharp(Buffer.from(uri.split(',')[1] ?? '', 'base64')).metadata();
  const scale = 320 / Math.max(meta.width ?? 1, meta.height ?? 1);
  const even = (n: number) => Math.max(2, 2 * Math.round((n * scale) / 2));
  return `${even(meta.width ?? 1)}x${even(meta.height ?? 1)}`;
}

/** A small H.264 MP4 (`seconds` long, 2 by default; 10 fps) the size Veo would answer for the aspect ratio, scaled down (or `size`); with an AAC tone when `sound`. */
async function video(aspect: string, sound: boolean, seconds = 2, size = SIZES[aspect] ?? SIZES['16:9']): Promise<Buffer> {
  const file = path.join(os.tmpdir(), `fal-fake-${randomUUID()}.mp4`);
  const audio = sound ? ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, '-c:a', 'aac', '-shortest'] : [];
  await runFfmpeg([
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=${size}:rate=10:duration=${seconds}`,
    ...audio,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    file,
  ]);
  try {
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}

/** The portrait (a data URI) shown for as long as the audio (a data URI) plays, with that audio: 10 fps H.264/AAC. */
async function talkingHead(imageUri: string, audioUri: string): Promise<Buffer> {
  const dir = path.join(os.tmpdir(), `fal-fake-${randomUUID()}`);
  await mkdir(dir, { recursive: true });
  try {
    const image = path.join(dir, 'portrait');
    const audio = path.join(dir, 'audio');
    await writeFile(image, Buffer.from(imageUri.split(',')[1], 'base64'));
    await writeFile(audio, Buffer.from(audioUri.split(',')[1], 'base64'));
    const out = path.join(dir, 'out.mp4');
    const typeOf = (uri: string) => /^data:([^;,]+)/.exec(uri)?.[1] ?? '';
    // biome-ignore format: ffmpeg's arguments read best as option-value pairs
    await runFfmpeg([
      ...inputArgs({ path: image, type: typeOf(imageUri) }, ['-loop', '1', '-framerate', '10']),
      ...inputArgs({ path: audio, type: typeOf(audioUri) }),
      '-vf', 'scale=trunc(iw/2)*2:trunc(ih/2)*2,format=yuv420p',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-shortest', '-movflags', '+faststart', out,
    ], { cwd: dir });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The words a request says (its prompt, or a speech request's text), for the behaviours keyed on them. */
function saidIn(input: Record<string, any>): string {
  const said = input.prompt ?? input.text;
  return typeof said === 'string' ? said : '';
}

/** The bytes and type of a URL the fake was sent: a data URI's, or a file fetched (as fal fetches its inputs). */
async function mediaOf(url: string): Promise<{ bytes: Buffer; type: string }> {
  if (url.startsWith('data:'))
    return { bytes: Buffer.from(url.split(',')[1] ?? '', 'base64'), type: /^data:([^;,]+)/.exec(url)?.[1] ?? '' };
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return { bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') ?? '' };
}

/** The video (a URL) with the audio (a URL) as its sound, as long as the shorter of the two (sync_mode cut_off): 10 fps H.264/AAC. */
async function lipSynced(videoUrl: string, audioUrl: string): Promise<Buffer> {
  const dir = path.join(os.tmpdir(), `fal-fake-${randomUUID()}`);
  await mkdir(dir, { recursive: true });
  try {
    const [video, audio] = await Promise.all([mediaOf(videoUrl), mediaOf(audioUrl)]);
    const [videoFile, audioFile, out] = ['video', 'audio', 'out.mp4'].map((f) => path.join(dir, f));
    await writeFile(videoFile, video.bytes);
    await writeFile(audioFile, audio.bytes);
    // biome-ignore format: ffmpeg's arguments read best as option-value pairs
    await runFfmpeg([
      ...inputArgs({ path: videoFile, type: video.type }),
      ...inputArgs({ path: audioFile, type: audio.type }),
      '-map', '0:v:0', '-map', '1:a:0',
      '-vf', 'scale=trunc(iw/2)*2:trunc(ih/2)*2,fps=10,format=yuv420p',
      // -shortest alone overshoots by the frames the filters buffer; these keep it to a frame or so.
      '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-shortest', '-fflags', '+shortest', '-max_interleave_delta', '100M',
      '-movflags', '+faststart', out,
    ], { cwd: dir });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function startFalFake(key: string, options: FalFakeOptions = {}): Promise<FalFake> {
  const requests: FalFake['requests'] = new Map();
  const throttled = new Set<string>();
  const made = new Map<string, Promise<Buffer>>();
  const footage = (aspect: string, sound: boolean, seconds?: number, size?: string) => {
    if (!options.instant) return video(aspect, sound, seconds, size);
    const key = `${aspect} ${sound} ${seconds} ${size}`;
    if (!made.has(key)) made.set(key, video(aspect, sound, seconds, size));
    return made.get(key)!;
  };
  /** A SCHEMAS endpoint's silent clip: as long as asked, in the frame asked for or the first frame's. */
  const clip = async (endpoint: string, input: Record<string, any>) => {
    const aspect = input.aspect_ratio ?? 'auto';
    const size = SIZES[aspect] ?? (await sizeOfImage(input.image_url));
    return footage(aspect, false, clipSeconds(endpoint, input), size);
  };
  /** Polls a request needs before it completes. */
  const pollsNeeded = options.instant ? 1 : 2;
  let held = false;
  let fake: Fake;
  fake = await startFake(async (req, res, json) => {
    if (req.headers.authorization !== `Key ${key}`) return json(401, { detail: 'Authentication is required to access this application.' });
    const endpoint = req.path.slice(1);
    if (req.method === 'POST' && ENDPOINTS.has(endpoint)) {
      const input = req.body;
      if (!input || typeof input !== 'object' || Buffer.isBuffer(input))
        return json(422, { detail: [{ loc: ['body'], msg: 'field required', type: 'value_error.missing' }] });
      const problems = SCHEMAS[endpoint] ? schemaProblems(endpoint, input) : veoKlingOmniProblems(endpoint, input);
      if (problems.length) return json(422, { detail: problems });
      const said = saidIn(input);
      if (/throttle/.test(said) && !throttled.has(said)) {
        throttled.add(said);
        return json(429, { detail: 'Rate limit exceeded. Please retry later.' }, { 'retry-after': '1' });
      }
      const id = randomUUID();
      requests.set(id, { id, endpoint, input, polls: 0, canceled: false });
      const root = `${fake.url}/${rootOf(endpoint)}/requests/${id}`;
      return json(200, {
        status: 'IN_QUEUE',
        request_id: id,
        response_url: root,
        status_url: `${root}/status`,
        cancel_url: `${root}/cancel`,
        queue_position: 0,
      });
    }
    const m = /^\/([^/]+\/[^/]+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(req.path);
    const r = m && requests.get(m[2]);
    if (!m || !r || rootOf(r.endpoint) !== m[1]) return json(404, { detail: 'Request not found' });
    const root = `${fake.url}/${m[1]}/requests/${r.id}`;
    const sub = m[3];
    const slow = (held || /slow/.test(saidIn(r.input))) && !r.canceled;
    if (sub === '/cancel') {
      if (req.method !== 'PUT') return json(405, { detail: 'Method Not Allowed' });
      if (!slow) return json(400, { status: 'ALREADY_COMPLETED' });
      r.canceled = true;
      return json(202, { status: 'CANCELLATION_REQUESTED' });
    }
    if (req.method !== 'GET') return json(405, { detail: 'Method Not Allowed' });
    if (sub === '/status') {
      r.polls++;
      if (slow || r.polls < pollsNeeded)
        return json(200, {
          status: r.polls < pollsNeeded ? 'IN_QUEUE' : 'IN_PROGRESS',
          queue_position: 0,
          response_url: root,
          status_url: `${root}/status`,
          cancel_url: `${root}/cancel`,
          logs: null,
        });
      return json(200, {
        status: 'COMPLETED',
        response_url: root,
        status_url: `${root}/status`,
        cancel_url: `${root}/cancel`,
        logs: null,
        metrics: { inference_time: 1.2 },
      });
    }
    if (slow || r.polls < pollsNeeded) return json(400, { detail: 'Request is still in progress' });
    if (/forbidden/.test(saidIn(r.input))) {
      return json(
        422,
        {
          detail: [
            {
              loc: ['body', 'prompt'],
              msg: 'The content could not be processed because it contained material flagged by a content checker.',
              type: 'content_policy_violation',
              url: 'https://docs.fal.ai/errors#content_policy_violation',
            },
          ],
        },
        { 'x-fal-retryable': 'false' },
      );
    }
    const tts = TTS[r.endpoint];
    if (tts) {
      const text: string = r.input[tts.text] ?? '';
      // "garbled": a file that is not audio (what our checks must refuse).
      const audio = /garbled/.test(text) ? Buffer.from(text) : await toneBytes(toneSpeech(text, tts.rate, FAL_TONE_HZ), tts.format);
      const type = tts.format === 'wav' ? 'audio/wav' : 'audio/mpeg';
      fake.files.set(`${r.id}.${tts.format}`, { type, bytes: audio });
      return json(200, {
        audio: {
          url: `${fake.url}/files/${r.id}.${tts.format}`,
          content_type: type,
          file_name: `output.${tts.format}`,
          file_size: audio.length,
        },
      });
    }
    // Veo makes its sound unless generate_audio is false (its default is true); Kling makes none;
    // OmniHuman animates the portrait for as long as the audio, which it keeps.
    const bytes =
      r.endpoint === OMNIHUMAN
        ? await talkingHead(r.input.image_url, r.input.audio_url)
        : r.endpoint === LIPSYNC
          ? await lipSynced(r.input.video_url, r.input.audio_url)
          : SCHEMAS[r.endpoint]
            ? await clip(r.endpoint, r.input)
            : await footage(r.input.aspect_ratio ?? '16:9', !KLING_I2V.includes(r.endpoint) && r.input.generate_audio !== false);
    fake.files.set(`${r.id}.mp4`, { type: 'video/mp4', bytes });
    return json(200, {
      video: { url: `${fake.url}/files/${r.id}.mp4`, content_type: 'video/mp4', file_name: 'output.mp4', file_size: bytes.length },
    });
  });
  const hold = () => {
    held = true;
    return () => {
      held = false;
    };
  };
  return Object.assign(fake, { requests, hold });
}
