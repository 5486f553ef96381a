// A fake ComfyUI server, built from ComfyUI's own source (github.com/comfyanonymous/ComfyUI):
//   server.py   PromptServer routes: POST /prompt ({prompt, client_id} → {prompt_id, number,
//               node_errors}; invalid → 400 {error, node_errors}; no prompt → 400 no_prompt),
//               GET /history/{prompt_id} ({} until finished), GET /queue ({queue_running,
//               queue_pending}, items [number, prompt_id, prompt, extra_data, outputs]), POST /queue
//               {delete: [ids]}, POST /interrupt ({prompt_id}: only that prompt when it runs),
//               POST /upload/image (multipart image, overwrite, subfolder, type → {name, subfolder,
//               type}; without overwrite a taken name becomes "name (1).ext"), GET /view
//               (filename, subfolder, type; 400 for "..", 404 for an unknown file);
//   execution.py validate_prompt/validate_inputs: a node without class_type or of an unknown class →
//               400 {"error": {"type": "invalid_prompt", "message": "Cannot execute because node X
//               does not exist.", "details": "Node ID '#id'", "extra_info": {}}, "node_errors": {}};
//               no output node → prompt_no_outputs; per node: required_input_missing,
//               bad_linked_input, return_type_mismatch, invalid_input_type, value_smaller_than_min,
//               value_bigger_than_max, value_not_in_list, custom_validation_failed (LoadImage: "Invalid
//               image file"), a link to a missing node → the KeyError filed as
//               exception_during_(inner_)validation; all outputs failing →
//               prompt_outputs_failed_validation with node_errors {id: {errors, dependent_outputs,
//               class_type}}; PromptQueue.task_done: history {prompt, outputs, status: {status_str,
//               completed, messages}};
//   nodes.py, comfy_extras/nodes_video.py, nodes_wan.py: the INPUT_TYPES and RETURN_TYPES of the
//               nodes below; SaveVideo/SaveWEBM/SaveAnimatedWEBP answer {images, animated: [true]}
//               (comfy_api ui.PreviewVideo), SaveImage {images}.
// ComfyUI has no authentication and no rate limiting of its own, so neither is faked.
// A prompt is pending for its first look at /history, running for the next, then finished: the
// fake "renders" real files whose colour is colourOf(positive prompt, seed) at the size of the
// graph's latent (EmptyLatentImage, WanImageToVideo): PNG for SaveImage, H.264 MP4 or VP9 WebM
// (frames and fps of the graph) for SaveVideo and SaveWEBM, animated WebP for SaveAnimatedWEBP.
// Words in the positive prompt: "stays queued" (never starts), "runs forever" (never finishes),
// "fails to run" (execution_error on the KSampler).
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { FFMPEG_PATH } from '../../../src/media/ffmpeg.ts';
import { png, startFake, type Fake } from './common.ts';

type Spec = [string | string[], { min?: number; max?: number }?];
interface NodeDef {
  required: Record<string, Spec>;
  optional?: Record<string, Spec>;
  returns: string[];
  output?: boolean;
  /** VALIDATE_INPUTS: true, or the reason. */
  validate?: (inputs: Record<string, unknown>, fake: ComfyuiFake) => true | string;
}

const MAX_RESOLUTION = 16384;
const INT = (min: number, max: number): Spec => ['INT', { min, max }];
const FLOAT = (min: number, max: number): Spec => ['FLOAT', { min, max }];
export const CHECKPOINTS = ['sd_xl_base_1.0.safetensors', 'v1-5-pruned-emaonly.safetensors'];
const SAMPLERS = ['euler', 'euler_ancestral', 'heun', 'dpm_2', 'dpmpp_2m', 'dpmpp_2m_sde', 'ddim', 'uni_pc', 'uni_pc_bh2'];
const SCHEDULERS = ['simple', 'sgm_uniform', 'karras', 'exponential', 'ddim_uniform', 'beta', 'normal', 'linear_quadratic', 'kl_optimal'];

const NODES: Record<string, NodeDef> = {
  CheckpointLoaderSimple: { required: { ckpt_name: [CHECKPOINTS] }, returns: ['MODEL', 'CLIP', 'VAE'] },
  CLIPTextEncode: { required: { text: ['STRING'], clip: ['CLIP'] }, returns: ['CONDITIONING'] },
  EmptyLatentImage: {
    required: { width: INT(16, MAX_RESOLUTION), height: INT(16, MAX_RESOLUTION), batch_size: INT(1, 4096) },
    returns: ['LATENT'],
  },
  KSampler: {
    required: {
      model: ['MODEL'],
      seed: INT(0, Number.MAX_SAFE_INTEGER),
      steps: INT(1, 10000),
      cfg: FLOAT(0, 100),
      sampler_name: [SAMPLERS],
      scheduler: [SCHEDULERS],
      positive: ['CONDITIONING'],
      negative: ['CONDITIONING'],
      latent_image: ['LATENT'],
      denoise: FLOAT(0, 1),
    },
    returns: ['LATENT'],
  },
  VAEDecode: { required: { samples: ['LATENT'], vae: ['VAE'] }, returns: ['IMAGE'] },
  SaveImage: { required: { images: ['IMAGE'], filename_prefix: ['STRING'] }, returns: [], output: true },
  LoadImage: {
    required: { image: [[]] },
    returns: ['IMAGE', 'MASK'],
    validate: (inputs, fake) => (fake.uploads.has(String(inputs.image)) ? true : `Invalid image file: ${inputs.image}`),
  },
  UNETLoader: {
    required: {
      unet_name: [['wan2.1_i2v_480p_14B_fp16.safetensors']],
      weight_dtype: [['default', 'fp8_e4m3fn', 'fp8_e4m3fn_fast', 'fp8_e5m2']],
    },
    returns: ['MODEL'],
  },
  CLIPLoader: {
    required: {
      clip_name: [['umt5_xxl_fp8_e4m3fn_scaled.safetensors']],
      type: [
        [
          'stable_diffusion',
          'stable_cascade',
          'sd3',
          'stable_audio',
          'mochi',
          'ltxv',
          'pixart',
          'cosmos',
          'lumina2',
          'wan',
          'hidream',
          'chroma',
        ],
      ],
    },
    optional: { device: [['default', 'cpu']] },
    returns: ['CLIP'],
  },
  VAELoader: { required: { vae_name: [['wan_2.1_vae.safetensors', 'sdxl_vae.safetensors']] }, returns: ['VAE'] },
  CLIPVisionLoader: { required: { clip_name: [['clip_vision_h.safetensors']] }, returns: ['CLIP_VISION'] },
  CLIPVisionEncode: {
    required: { clip_vision: ['CLIP_VISION'], image: ['IMAGE'], crop: [['center', 'none']] },
    returns: ['CLIP_VISION_OUTPUT'],
  },
  WanImageToVideo: {
    required: {
      positive: ['CONDITIONING'],
      negative: ['CONDITIONING'],
      vae: ['VAE'],
      width: INT(16, MAX_RESOLUTION),
      height: INT(16, MAX_RESOLUTION),
      length: INT(1, MAX_RESOLUTION),
      batch_size: INT(1, 4096),
    },
    optional: { clip_vision_output: ['CLIP_VISION_OUTPUT'], start_image: ['IMAGE'] },
    returns: ['CONDITIONING', 'CONDITIONING', 'LATENT'],
  },
  CreateVideo: { required: { images: ['IMAGE'], fps: FLOAT(1, 120) }, optional: { audio: ['AUDIO'] }, returns: ['VIDEO'] },
  SaveVideo: {
    required: { video: ['VIDEO'], filename_prefix: ['STRING'], format: [['auto', 'mp4', 'webm']], codec: [['auto', 'h264', 'vp9']] },
    returns: [],
    output: true,
  },
  SaveWEBM: {
    required: { images: ['IMAGE'], filename_prefix: ['STRING'], codec: [['vp9', 'av1']], fps: FLOAT(0.01, 1000), crf: FLOAT(0, 63) },
    returns: [],
    output: true,
  },
  SaveAnimatedWEBP: {
    required: {
      images: ['IMAGE'],
      filename_prefix: ['STRING'],
      fps: FLOAT(0.01, 1000),
      lossless: ['BOOLEAN'],
      quality: INT(0, 100),
      method: [['default', 'fastest', 'slowest']],
    },
    returns: [],
    output: true,
  },
};

type Graph = Record<string, { class_type?: string; inputs?: Record<string, unknown> }>;
type NodeError = { type: string; message: string; details: string; extra_info: Record<string, unknown> };

export interface FakePrompt {
  id: string;
  number: number;
  graph: Graph;
  clientId: unknown;
  outputs: string[];
  state: 'pending' | 'running' | 'done' | 'error' | 'interrupted';
  history?: Record<string, unknown>;
}

export interface ComfyuiFake extends Fake {
  prompts: Map<string, FakePrompt>;
  /** Uploaded inputs by the name LoadImage takes ("subfolder/name" or "name"). */
  uploads: Map<string, Buffer>;
  /** Saved outputs by "type/subfolder/filename". */
  saved: Map<string, Buffer>;
  /** GET /view answers 503 this many more times (a server busy writing, a proxy hiccup). */
  failViews: number;
  /** Prompts accepted by POST /prompt (deleted ones included). */
  submissions(): number;
}

/** The colour the fake paints for a positive prompt and a seed ('#rrggbb'). */
export function colourOf(prompt: string, seed: number): string {
  return `#${createHash('sha256').update(`${prompt}\u0000${seed}`).digest('hex').slice(0, 6)}`;
}

const isLink = (v: unknown): v is unknown[] => Array.isArray(v);

class KeyError extends Error {}

/** execution.py validate_inputs, for the node types above. */
function validateInputs(
  graph: Graph,
  id: string,
  validated: Map<string, [boolean, NodeError[]]>,
  fake: ComfyuiFake,
): [boolean, NodeError[]] {
  const known = validated.get(id);
  if (known) return known;
  const node = graph[id];
  const def = NODES[node.class_type!];
  const inputs = node.inputs ?? {};
  const errors: NodeError[] = [];
  let valid = true;
  const specs = { ...def.required, ...(def.optional ?? {}) };
  for (const [name, spec] of Object.entries(specs)) {
    const info = { input_name: name };
    if (!(name in inputs)) {
      if (name in def.required)
        errors.push({ type: 'required_input_missing', message: 'Required input is missing', details: name, extra_info: info });
      continue;
    }
    const val = inputs[name];
    const [type, range] = spec;
    if (isLink(val)) {
      if (val.length !== 2) {
        errors.push({
          type: 'bad_linked_input',
          message: 'Bad linked input, must be a length-2 list of [node_id, slot_index]',
          details: name,
          extra_info: info,
        });
        continue;
      }
      const linked = graph[String(val[0])];
      if (!linked) throw new KeyError(`'${val[0]}'`); // prompt[o_id]['class_type']
      const received = NODES[linked.class_type!].returns[Number(val[1])];
      if (received !== type) {
        errors.push({
          type: 'return_type_mismatch',
          message: 'Return type mismatch between linked nodes',
          details: `${name}, received_type(${received}) mismatch input_type(${type})`,
          extra_info: { ...info, received_type: received, linked_node: val },
        });
        continue;
      }
      try {
        if (!validateInputs(graph, String(val[0]), validated, fake)[0]) valid = false;
      } catch (err) {
        if (!(err instanceof KeyError)) throw err;
        valid = false;
        validated.set(String(val[0]), [
          false,
          [
            {
              type: 'exception_during_inner_validation',
              message: 'Exception when validating inner node',
              details: err.message,
              extra_info: { ...info, exception_message: err.message, exception_type: 'KeyError', linked_node: val },
            },
          ],
        ]);
      }
      continue;
    }
    let v: unknown = val;
    if (type === 'INT' || type === 'FLOAT') {
      v = Number(val);
      if (typeof val === 'boolean' || !Number.isFinite(v as number)) {
        errors.push({
          type: 'invalid_input_type',
          message: `Failed to convert an input value to a ${type} value`,
          details: `${name}, ${val}, invalid literal`,
          extra_info: { ...info, received_value: val },
        });
        continue;
      }
      if (type === 'INT') v = Math.trunc(v as number);
    }
    if (range?.min !== undefined && (v as number) < range.min) {
      errors.push({
        type: 'value_smaller_than_min',
        message: `Value ${v} smaller than min of ${range.min}`,
        details: name,
        extra_info: { ...info, received_value: v },
      });
      continue;
    }
    if (range?.max !== undefined && (v as number) > range.max) {
      errors.push({
        type: 'value_bigger_than_max',
        message: `Value ${v} bigger than max of ${range.max}`,
        details: name,
        extra_info: { ...info, received_value: v },
      });
      continue;
    }
    if (def.validate) {
      const r = def.validate(inputs, fake);
      if (r !== true)
        errors.push({
          type: 'custom_validation_failed',
          message: 'Custom validation failed for node',
          details: `${name} - ${r}`,
          extra_info: { ...info, received_value: v },
        });
    } else if (Array.isArray(type) && !type.includes(String(v))) {
      errors.push({
        type: 'value_not_in_list',
        message: 'Value not in list',
        details: `${name}: '${v}' not in ${JSON.stringify(type)}`,
        extra_info: { ...info, received_value: v },
      });
    }
  }
  const result: [boolean, NodeError[]] = [errors.length === 0 && valid, errors];
  validated.set(id, result);
  return result;
}

/** execution.py validate_prompt: [ok, error, good outputs, node_errors]. */
function validatePrompt(graph: Graph, fake: ComfyuiFake): { error?: NodeError; outputs: string[]; nodeErrors: Record<string, unknown> } {
  const outputs: string[] = [];
  for (const [id, node] of Object.entries(graph)) {
    if (!node || typeof node !== 'object' || typeof node.class_type !== 'string')
      return {
        error: {
          type: 'invalid_prompt',
          message: 'Cannot execute because a node is missing the class_type property.',
          details: `Node ID '#${id}'`,
          extra_info: {},
        },
        outputs,
        nodeErrors: {},
      };
    if (!NODES[node.class_type])
      return {
        error: {
          type: 'invalid_prompt',
          message: `Cannot execute because node ${node.class_type} does not exist.`,
          details: `Node ID '#${id}'`,
          extra_info: {},
        },
        outputs,
        nodeErrors: {},
      };
    if (NODES[node.class_type].output) outputs.push(id);
  }
  if (!outputs.length)
    return { error: { type: 'prompt_no_outputs', message: 'Prompt has no outputs', details: '', extra_info: {} }, outputs, nodeErrors: {} };
  const validated = new Map<string, [boolean, NodeError[]]>();
  const good: string[] = [];
  const failed: [string, NodeError[]][] = [];
  const nodeErrors: Record<string, { errors: NodeError[]; dependent_outputs: string[]; class_type: string }> = {};
  for (const o of outputs) {
    let result: [boolean, NodeError[]];
    try {
      result = validateInputs(graph, o, validated, fake);
    } catch (err) {
      if (!(err instanceof KeyError)) throw err;
      result = [
        false,
        [
          {
            type: 'exception_during_validation',
            message: 'Exception when validating node',
            details: err.message,
            extra_info: { exception_type: 'KeyError' },
          },
        ],
      ];
      validated.set(o, result);
    }
    if (result[0]) {
      good.push(o);
      continue;
    }
    failed.push([o, result[1]]);
    for (const [id, [ok, reasons]] of validated) {
      if (ok || !reasons.length) continue;
      nodeErrors[id] ??= { errors: reasons, dependent_outputs: [], class_type: graph[id].class_type! };
      nodeErrors[id].dependent_outputs.push(o);
    }
  }
  if (!good.length) {
    const details = failed.flatMap(([, errs]) => errs.map((e) => `${e.message}: ${e.details}`)).join('\n');
    return {
      error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation', details, extra_info: {} },
      outputs: good,
      nodeErrors,
    };
  }
  return { outputs: good, nodeErrors };
}

/** Nodes upstream of `id` (itself included), nearest first. */
function upstream(graph: Graph, id: string, seen = new Set<string>()): string[] {
  if (seen.has(id) || !graph[id]) return [];
  seen.add(id);
  const out = [id];
  for (const v of Object.values(graph[id].inputs ?? {})) if (isLink(v)) out.push(...upstream(graph, String(v[0]), seen));
  return out;
}

/** The positive prompt text reaching a KSampler (through conditioning nodes such as WanImageToVideo). */
function positiveText(graph: Graph, link: unknown): string {
  if (!isLink(link)) return '';
  const node = graph[String(link[0])];
  if (node?.class_type === 'CLIPTextEncode') return String(node.inputs?.text ?? '');
  return positiveText(graph, node?.inputs?.positive);
}

/** What the graph asks of output node `id`: colour, size, frames and fps. */
export function renderFacts(graph: Graph, id: string) {
  const nodes = upstream(graph, id).map((n) => graph[n]);
  const sampler = nodes.find((n) => n.class_type === 'KSampler');
  const latent = nodes.find((n) => n.inputs && 'width' in n.inputs && 'height' in n.inputs);
  const rate = nodes.find((n) => n.inputs && typeof n.inputs.fps === 'number');
  const prompt = positiveText(graph, sampler?.inputs?.positive);
  return {
    prompt,
    seed: Number(sampler?.inputs?.seed ?? 0),
    colour: colourOf(prompt, Number(sampler?.inputs?.seed ?? 0)),
    width: Number(latent?.inputs?.width ?? 512),
    height: Number(latent?.inputs?.height ?? 512),
    frames: Number(latent?.inputs?.length ?? 8),
    fps: Number(rate?.inputs?.fps ?? 16),
  };
}

const run = promisify(execFile);

async function encodeVideo(f: ReturnType<typeof renderFacts>, ext: 'mp4' | 'webm'): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'comfyui-fake-'));
  try {
    const file = path.join(dir, `out.${ext}`);
    const codec =
      ext === 'mp4'
        ? ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']
        : ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-b:v', '200k'];
    const src = `color=c=0x${f.colour.slice(1)}:s=${f.width}x${f.height}:r=${f.fps}`;
    await run(FFMPEG_PATH, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', src, '-frames:v', String(f.frames), ...codec, file]);
    return await readFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function animatedWebp(f: ReturnType<typeof renderFacts>): Promise<Buffer> {
  // Frames differ (a mark moving along the bottom edge), or the encoder merges them into one.
  const base = await png(f.width, f.height, f.colour);
  const mark = await png(2, 2, '#ffffff');
  const frames = await Promise.all(
    Array.from({ length: f.frames }, (_, i) =>
      sharp(base)
        .composite([{ input: mark, left: (2 * i) % (f.width - 2), top: f.height - 2 }])
        .png()
        .toBuffer(),
    ),
  );
  return sharp(frames, { join: { animated: true } })
    .webp({ delay: Array(f.frames).fill(Math.round(1000 / f.fps)), loop: 0 })
    .toBuffer();
}

export async function startComfyuiFake(): Promise<ComfyuiFake> {
  const prompts = new Map<string, FakePrompt>();
  const uploads = new Map<string, Buffer>();
  const saved = new Map<string, Buffer>();
  let number = 0;
  let counter = 0;

  async function save(prompt: FakePrompt, nodeId: string): Promise<Record<string, unknown>> {
    const node = prompt.graph[nodeId];
    const facts = renderFacts(prompt.graph, nodeId);
    const prefix = String(node.inputs?.filename_prefix ?? 'ComfyUI');
    const subfolder = path.posix.dirname(prefix) === '.' ? '' : path.posix.dirname(prefix);
    const base = `${path.posix.basename(prefix)}_${String(++counter).padStart(5, '0')}_`;
    let ext: string;
    let bytes: Buffer;
    if (node.class_type === 'SaveImage') [ext, bytes] = ['png', await png(facts.width, facts.height, facts.colour)];
    else if (node.class_type === 'SaveAnimatedWEBP') [ext, bytes] = ['webp', await animatedWebp(facts)];
    else {
      ext = node.class_type === 'SaveWEBM' || node.inputs?.format === 'webm' ? 'webm' : 'mp4';
      bytes = await encodeVideo(facts, ext as 'mp4' | 'webm');
    }
    const filename = `${base}.${ext}`;
    saved.set(`output/${subfolder}/${filename}`, bytes);
    const item = { filename, subfolder, type: 'output' };
    return node.class_type === 'SaveImage' ? { images: [item] } : { images: [item], animated: [true] };
  }

  async function finish(p: FakePrompt): Promise<void> {
    const text = renderFacts(p.graph, p.outputs[0]).prompt;
    const started = ['execution_start', { prompt_id: p.id, timestamp: Date.now() }];
    const record = (status: unknown, outputs: Record<string, unknown> = {}) => {
      p.history = { prompt: [p.number, p.id, p.graph, { client_id: p.clientId }, p.outputs], outputs, status, meta: {} };
    };
    if (p.state === 'interrupted' || /fails to run/.test(text)) {
      const sampler = Object.keys(p.graph).find((id) => p.graph[id].class_type === 'KSampler') ?? p.outputs[0];
      const message =
        p.state === 'interrupted'
          ? ['execution_interrupted', { prompt_id: p.id, node_id: sampler, node_type: 'KSampler', executed: [], timestamp: Date.now() }]
          : [
              'execution_error',
              {
                prompt_id: p.id,
                node_id: sampler,
                node_type: 'KSampler',
                executed: [],
                exception_message: 'CUDA out of memory. Tried to allocate 2.00 GiB',
                exception_type: 'torch.OutOfMemoryError',
                traceback: [],
                current_inputs: {},
                current_outputs: {},
                timestamp: Date.now(),
              },
            ];
      p.state = p.state === 'interrupted' ? 'interrupted' : 'error';
      return record({ status_str: 'error', completed: false, messages: [started, message] });
    }
    const outputs: Record<string, unknown> = {};
    for (const o of p.outputs) outputs[o] = await save(p, o);
    p.state = 'done';
    record(
      { status_str: 'success', completed: true, messages: [started, ['execution_success', { prompt_id: p.id, timestamp: Date.now() }]] },
      outputs,
    );
  }

  /** Each look at /history moves a prompt on: pending → running → finished. */
  async function advance(p: FakePrompt): Promise<void> {
    const text = renderFacts(p.graph, p.outputs[0]).prompt;
    if (p.state === 'pending' && !/stays queued/.test(text)) p.state = 'running';
    else if (p.state === 'running' && !/runs forever/.test(text)) await finish(p);
  }

  const queueItem = (p: FakePrompt) => [p.number, p.id, p.graph, { client_id: p.clientId }, p.outputs];
  const fake = (await startFake(async (req, res, json): Promise<void> => {
    const query = new URL(res.req.url ?? '/', 'http://x').searchParams;
    if (req.method === 'POST' && req.path === '/prompt') {
      const body = req.body;
      if (!body || typeof body !== 'object' || !('prompt' in body))
        return json(400, {
          error: { type: 'no_prompt', message: 'No prompt provided', details: 'No prompt provided', extra_info: {} },
          node_errors: {},
        });
      const v = validatePrompt(body.prompt as Graph, fake);
      if (v.error) return json(400, { error: v.error, node_errors: v.nodeErrors });
      const id = randomUUID();
      const p: FakePrompt = { id, number: number++, graph: body.prompt, clientId: body.client_id, outputs: v.outputs, state: 'pending' };
      prompts.set(id, p);
      return json(200, { prompt_id: id, number: p.number, node_errors: v.nodeErrors });
    }
    const history = /^\/history\/([^/]+)$/.exec(req.path);
    if (req.method === 'GET' && history) {
      const p = prompts.get(history[1]);
      if (p && (p.state === 'pending' || p.state === 'running')) await advance(p);
      return json(200, p?.history ? { [p.id]: p.history } : {});
    }
    if (req.method === 'GET' && req.path === '/queue') {
      const list = (state: FakePrompt['state']) => [...prompts.values()].filter((p) => p.state === state).map(queueItem);
      return json(200, { queue_running: list('running'), queue_pending: list('pending') });
    }
    if (req.method === 'POST' && req.path === '/queue') {
      for (const id of (req.body?.delete as string[] | undefined) ?? []) if (prompts.get(id)?.state === 'pending') prompts.delete(id);
      return void res.writeHead(200).end();
    }
    if (req.method === 'POST' && req.path === '/interrupt') {
      const only = req.body?.prompt_id as string | undefined;
      for (const p of prompts.values())
        if (p.state === 'running' && (!only || p.id === only)) {
          p.state = 'interrupted';
          await finish(p);
        }
      return void res.writeHead(200).end();
    }
    if (req.method === 'POST' && req.path === '/upload/image') {
      const file = req.body?.image?.[0];
      if (!file || typeof file !== 'object' || !file.name) return void res.writeHead(400).end();
      const subfolder = String(req.body.subfolder?.[0] ?? '');
      const overwrite = ['true', '1'].includes(String(req.body.overwrite?.[0]));
      const key = (n: string) => (subfolder ? `${subfolder}/${n}` : n);
      let name = String(file.name);
      const { name: stem, ext } = path.parse(name);
      for (let i = 1; !overwrite && uploads.has(key(name)); i++) name = `${stem} (${i})${ext}`;
      uploads.set(key(name), file.bytes);
      return json(200, { name, subfolder, type: String(req.body.type?.[0] ?? 'input') });
    }
    if (req.method === 'GET' && req.path === '/view') {
      const filename = query.get('filename');
      if (!filename) return void res.writeHead(404).end();
      if (filename.startsWith('/') || filename.includes('..')) return void res.writeHead(400).end();
      const type = query.get('type') ?? 'output';
      if (!['output', 'input', 'temp'].includes(type)) return void res.writeHead(400).end();
      const bytes = saved.get(`${type}/${query.get('subfolder') ?? ''}/${filename}`);
      if (!bytes) return void res.writeHead(404).end();
      if (fake.failViews > 0 && fake.failViews--) return void res.writeHead(503).end();
      return void res
        .writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': `filename="${filename}"` })
        .end(bytes);
    }
    return void res.writeHead(404).end();
  })) as ComfyuiFake;
  fake.prompts = prompts;
  fake.uploads = uploads;
  fake.saved = saved;
  fake.submissions = () => number;
  fake.failViews = 0;
  return fake;
}
