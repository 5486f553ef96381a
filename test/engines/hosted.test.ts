// The hosted adapters' failure mapping and output checks, against the provider fakes (no app):
// validation errors, wrong keys, rate limits beyond the in-place waits, unreachable hosts,
// outputs that are not media or over the pixel limits, format conversion, and an abort that
// leaves the hosted job running for the next attempt.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { createGuardedFetcher } from '../../src/net/guarded-fetch.ts';
import { FalProvider } from '../../src/engines/hosted/fal.ts';
import { hostedRequest, type HostedOptions } from '../../src/engines/hosted/hosted.ts';
import { OpenAiImagesProvider } from '../../src/engines/hosted/openai-images.ts';
import { ReplicateProvider } from '../../src/engines/hosted/replicate.ts';
import { ProviderError, type GenerationJob, type ProviderJobRef } from '../../src/engines/generation.ts';
import { freePort } from '../helpers/app.ts';
import { startFalFake } from './fakes/fal.ts';
import { startOpenAiFake } from './fakes/openai.ts';
import { startReplicateFake } from './fakes/replicate.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'providers-hosted-'));
const replicate = await startReplicateFake('r8_unit');
const fal = await startFalFake('fal:unit');
const openai = await startOpenAiFake('sk-unit');
t.teardown(async () => {
  await Promise.all([replicate.close(), fal.close(), openai.close()]);
  rmSync(work, { recursive: true, force: true });
});

const fetcher = createGuardedFetcher({ allowIps: ['127.0.0.1'] });
const opts = (baseUrl: string, key: string, over: Partial<HostedOptions> = {}): HostedOptions => ({
  baseUrl,
  key,
  fetcher,
  pollMs: 20,
  ...over,
});
let seq = 0;
const job = (over: Partial<GenerationJob> = {}): GenerationJob => ({
  generationId: `5d1e2c3b-0000-4000-8000-${String(++seq).padStart(12, '0')}`,
  type: 'ai_model',
  output: 'image',
  prompt: 'A lamp',
  title: 'Flux Image',
  aspectRatio: '1:1',
  width: 1024,
  height: 1024,
  imageFormat: 'png',
  referenceImages: [],
  generateAudio: false,
  providerModel: { name: 'replicate', model: 'black-forest-labs/flux-1.1-pro' },
  ...over,
});
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as ProviderError,
  );
const rep = (over: Partial<HostedOptions> = {}) => new ReplicateProvider(opts(replicate.url, 'r8_unit', over));

t.test('input the model refuses: not retryable, with the provider’s message', async (t) => {
  const e = await failure(rep().generate(job({ aspectRatio: '21:9' }), { workDir: work }));
  t.ok(e instanceof ProviderError);
  t.same([e.retryable, e.code, e.status], [false, 'provider_rejected', 422]);
  t.match(e.message, /Input validation failed: - input.aspect_ratio: aspect_ratio must be one of/);
  const f = await failure(
    new FalProvider(opts(fal.url, 'fal:unit')).generate(
      job({
        output: 'video',
        aspectRatio: '4:5',
        durationSeconds: 4,
        providerModel: { name: 'fal', model: 'fal-ai/veo3/fast', duration_format: 'seconds' },
      }),
      { workDir: work },
    ),
  );
  t.same([f.retryable, f.code, f.status], [false, 'provider_rejected', 422]);
  t.match(f.message, /body.aspect_ratio: unexpected value/);
});

t.test('a wrong key is not retryable', async (t) => {
  const e = await failure(new ReplicateProvider(opts(replicate.url, 'r8_wrong')).generate(job(), { workDir: work }));
  t.same([e.retryable, e.code, e.status], [false, 'provider_unauthorized', 401]);
  const o = await failure(
    new OpenAiImagesProvider(opts(`${openai.url}/v1`, 'sk-wrong')).generate(
      job({ providerModel: { name: 'openai', model: 'gpt-image-1' } }),
      { workDir: work },
    ),
  );
  t.same([o.retryable, o.code, o.status], [false, 'provider_unauthorized', 401]);
  t.match(o.message, /Incorrect API key provided/);
});

t.test('a 429 beyond the in-place waits is retryable and carries Retry-After', async (t) => {
  const e = await failure(rep({ rateLimitWaits: 0 }).generate(job({ prompt: 'throttle unit' }), { workDir: work }));
  t.same([e.retryable, e.code, e.status, e.retryAfterMs], [true, 'provider_rate_limited', 429, 1000]);
});

t.test('an unreachable provider is retryable', async (t) => {
  const e = await failure(rep({ baseUrl: `http://127.0.0.1:${await freePort()}` }).generate(job(), { workDir: work }));
  t.same([e.retryable, e.code], [true, 'provider_unavailable']);
});

t.test('outputs are checked: not an image, over the pixel limits; converted to the asked format', async (t) => {
  const bad = await failure(rep().generate(job({ prompt: 'garbage please' }), { workDir: work }));
  t.same([bad.retryable, bad.code], [false, 'provider_invalid_output']);
  const big = await failure(rep({ pixelLimits: { maxPixels: 1024 * 1024 - 1, maxDimension: 16384 } }).generate(job(), { workDir: work }));
  t.same([big.retryable, big.code], [false, 'provider_invalid_output']);
  t.match(big.message, /pixels/);
  const jpeg = await rep().generate(job({ imageFormat: 'jpeg' }), { workDir: work });
  const meta = await sharp(jpeg.path).metadata();
  t.same([meta.format, jpeg.contentType, path.extname(jpeg.path), meta.width], ['jpeg', 'image/jpeg', '.jpg', 1024]);
  t.same(
    readdirSync(work).filter((f) => f.includes('.download')),
    [],
    'no partial downloads left',
  );
});

t.test('an abort while polling leaves the hosted job running (no cancel): the next attempt resumes it', async (t) => {
  const ac = new AbortController();
  const p = rep().generate(job({ prompt: 'slow and aborted' }), {
    workDir: work,
    signal: ac.signal,
    onProgress: (f) => f > 0.1 && ac.abort(),
  });
  t.equal((await p.catch((e) => e))?.name, 'AbortError');
  const pred = [...replicate.predictions.values()].find((x) => x.input.prompt === 'slow and aborted')!;
  t.equal(pred.status, 'processing');
  t.notOk(
    replicate.seen.some((s) => s.path.endsWith(`${pred.id}/cancel`)),
    'not canceled',
  );
});

t.test('a Replicate job past its deadline is canceled (POST …/cancel)', async (t) => {
  const e = await failure(rep({ jobTimeoutMs: 200 }).generate(job({ prompt: 'slow forever' }), { workDir: work }));
  t.same([e.retryable, e.code], [false, 'timeout']);
  const pred = [...replicate.predictions.values()].find((x) => x.input.prompt === 'slow forever')!;
  t.equal(pred.status, 'canceled');
});

t.test('cancel(ref): a fal request is canceled at its app root (what the worker does when no attempt follows)', async (t) => {
  const provider = new FalProvider(opts(fal.url, 'fal:unit'));
  const ac = new AbortController();
  let ref: ProviderJobRef | null = null;
  const veo = job({
    output: 'video',
    aspectRatio: '16:9',
    width: 1280,
    height: 720,
    durationSeconds: 4,
    prompt: 'slow fal',
    providerModel: { name: 'fal', model: 'fal-ai/veo3/fast', duration_format: 'seconds' },
  });
  const err = await provider
    .generate(veo, { workDir: work, signal: ac.signal, onSubmitted: async (r) => void ((ref = r), ac.abort()) })
    .catch((e) => e);
  t.equal(err?.name, 'AbortError');
  t.match(ref, { provider: 'fal', app: 'fal-ai/veo3', id: String });
  await provider.cancel(ref!);
  t.ok(fal.seen.some((s) => s.method === 'PUT' && s.path === `/fal-ai/veo3/requests/${ref!.id}/cancel`));
  t.ok(fal.requests.get(ref!.id)?.canceled);
});

t.test('hostedRequest: the brand kit as prompt guidance; its logo only after the references of a model that takes several', async (t) => {
  const ref = Buffer.from('reference-1');
  const ref2 = Buffer.from('reference-2');
  const logo = Buffer.from('logo');
  const kit: Partial<GenerationJob> = {
    brandName: 'Acme',
    brandColorRoles: [
      { role: 'primary', hex: '#ff5500' },
      { role: 'text', hex: '#111111' },
    ],
    brandColors: ['#FF5500', '#111111', '#ABCDEF'],
    fonts: ['DejaVu Serif', 'DejaVu Sans'],
    logo,
  };
  const guidance = 'Brand: Acme. Brand colours: primary #FF5500, text #111111, #ABCDEF. Brand fonts: DejaVu Serif, DejaVu Sans.';
  t.same(
    hostedRequest(job({ prompt: 'A lamp', referenceImages: [ref, ref2] }), { multipleImages: true }),
    { prompt: 'A lamp', images: [ref, ref2] },
    'no kit: as given',
  );
  t.same(
    hostedRequest(job({ prompt: 'A lamp', ...kit }), { multipleImages: true }),
    { prompt: `A lamp\n\n${guidance}`, images: [] },
    'no references: no logo (a text-to-X request stays one)',
  );
  t.same(hostedRequest(job({ prompt: 'A lamp', referenceImages: [ref, ref2], ...kit }), { multipleImages: true }), {
    prompt: `A lamp\n\n${guidance} The last input image is the brand logo: show it unaltered.`,
    images: [ref, ref2, logo],
  });
  t.same(
    hostedRequest(job({ prompt: 'A lamp', referenceImages: [ref, ref2], ...kit }), { multipleImages: false }),
    { prompt: `A lamp\n\n${guidance}`, images: [ref] },
    'a one-image model keeps the caller’s image',
  );
  t.same(
    hostedRequest(job({ prompt: '', brandName: 'Acme', brandColors: ['#123456'] }), { multipleImages: false }).prompt,
    'Brand: Acme. Brand colours: #123456.',
    'an older kit without roles; no prompt',
  );
});
