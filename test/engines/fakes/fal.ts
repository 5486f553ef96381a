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
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inputArgs, runFfmpeg } from '../../../src/media/ffmpeg.ts';
import { startFake, type Fake } from './common.ts';

const KLING_I2V = ['fal-ai/kling-video/v2.1/standard/image-to-video', 'fal-ai/kling-video/v2.1/pro/image-to-video'];
/** OmniHuman 1.5 (https://fal.ai/models/fal-ai/bytedance/omnihuman/v1.5/api): image_url and audio_url required, prompt and resolution optional. */
const OMNIHUMAN = 'fal-ai/bytedance/omnihuman/v1.5';
const ENDPOINTS = new Set(['fal-ai/veo3/fast', 'fal-ai/veo3', 'fal-ai/veo3/fast/image-to-video', ...KLING_I2V, OMNIHUMAN]);
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

/** A small H.264 MP4 (2 s, 10 fps) the size Veo would answer for the aspect ratio, scaled down; with an AAC tone when `sound`. */
async function video(aspect: string, sound: boolean): Promise<Buffer> {
  const size = aspect === '9:16' ? '180x320' : aspect === '1:1' ? '240x240' : '320x180';
  const file = path.join(os.tmpdir(), `fal-fake-${randomUUID()}.mp4`);
  const audio = sound ? ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-c:a', 'aac', '-shortest'] : [];
  await runFfmpeg([
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=${size}:rate=10:duration=2`,
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

export async function startFalFake(key: string, options: FalFakeOptions = {}): Promise<FalFake> {
  const requests: FalFake['requests'] = new Map();
  const throttled = new Set<string>();
  const made = new Map<string, Promise<Buffer>>();
  const footage = (aspect: string, sound: boolean) => {
    if (!options.instant) return video(aspect, sound);
    const key = `${aspect} ${sound}`;
    if (!made.has(key)) made.set(key, video(aspect, sound));
    return made.get(key)!;
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
      if (
        endpoint.endsWith('/image-to-video') &&
        (typeof input.image_url !== 'string' || !/^(https?:|data:image\/)/.test(input.image_url))
      ) {
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
      if (problems.length) return json(422, { detail: problems });
      if (/throttle/.test(input.prompt) && !throttled.has(input.prompt)) {
        throttled.add(input.prompt);
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
    const slow = (held || /slow/.test(r.input.prompt)) && !r.canceled;
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
    if (/forbidden/.test(r.input.prompt)) {
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
    // Veo makes its sound unless generate_audio is false (its default is true); Kling makes none;
    // OmniHuman animates the portrait for as long as the audio, which it keeps.
    const bytes =
      r.endpoint === OMNIHUMAN
        ? await talkingHead(r.input.image_url, r.input.audio_url)
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
