// What a record says about an engine that made part of it (the contract's EngineUse, in a
// slideshow's or faceless video's `engines`): kind, provider and model, decided by the registry
// entry that made it (src/engines/index.ts `label`) when the stage that called it ran, and kept
// in the stage runner's record of that stage (src/kernel/stages.ts, `runs[stage].engines`).
//   hosted       a provider's cloud service (ElevenLabs, fal, Pexels, Pixabay, api.openai.com, and an
//                OpenAI-compatible server at a public address or name);
//   self_hosted  an OpenAI-compatible server of the operator's own: its base URL is a loopback,
//                private-network or otherwise non-public address, localhost, a name without a
//                dot, or a name under .local, .internal, .lan, .home.arpa or .localhost;
//   local        the service's own engines (provider `local`, the engine's name as model).
import net from 'node:net';
import type { components } from '../../generated/openapi.d.ts';
import { addressRefusal } from '../net/address-policy.ts';

export type EngineUse = components['schemas']['EngineUse'];
/** A record's `engines` (the contract's RecordEngines). */
export type RecordEngines = components['schemas']['RecordEngines'];
/** Where a narration's word timings came from (the speech entry's `timings`). */
export type SpeechTimings = components['schemas']['SpeechEngineUse']['timings'];

const LOCAL_SUFFIXES = ['.local', '.internal', '.lan', '.home.arpa', '.localhost'];
const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/;
const KINDS = new Set(['hosted', 'self_hosted', 'local']);

/** Whether the server at `url` is a provider's (hosted) or the operator's own (self_hosted), by its host. */
export function serverKind(url: string): 'hosted' | 'self_hosted' {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (net.isIP(host)) return addressRefusal(host) ? 'self_hosted' : 'hosted';
  const local = host === 'localhost' || !host.includes('.') || LOCAL_SUFFIXES.some((s) => host.endsWith(s));
  return local ? 'self_hosted' : 'hosted';
}

/** A model name as the contract spells one (other characters become '-'), or null. */
function modelName(model: string | null | undefined): string | null {
  if (!model) return null;
  if (MODEL.test(model) && model.length <= 200) return model;
  const cleaned = model
    .replace(/[^A-Za-z0-9._:/@+-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 200);
  return cleaned || null;
}

/** An OpenAI-compatible server at `url`: OpenAI's own API (hosted, openai), or another server of the same API. */
export function openAiCompatible(url: string, model: string | undefined): EngineUse {
  const openai = new URL(url).hostname.toLowerCase() === 'api.openai.com';
  return { kind: openai ? 'hosted' : serverKind(url), provider: openai ? 'openai' : 'openai-compatible', model: modelName(model) };
}

/** A hosted provider's engine (elevenlabs, fal, pexels, pixabay). */
export const hostedEngine = (provider: string, model?: string): EngineUse => ({ kind: 'hosted', provider, model: modelName(model) });

/** One of the service's own engines, by name (local-writer, espeak-ng, ffmpeg, ...). */
export const localEngine = (model: string): EngineUse => ({ kind: 'local', provider: 'local', model });

/** A stored EngineUse read back, or undefined when it is not one (a row written by other code). */
function readUse(value: unknown): EngineUse | undefined {
  const v = value as Partial<EngineUse> | null | undefined;
  if (!v || typeof v !== 'object' || !KINDS.has(v.kind as string) || typeof v.provider !== 'string') return undefined;
  return { kind: v.kind as EngineUse['kind'], provider: v.provider, model: typeof v.model === 'string' ? v.model : null };
}

const CAPABILITIES = ['write', 'image', 'video', 'scene', 'stock', 'slide', 'speech', 'transcribe', 'render'] as const;

/**
 * The engines a resource's stages recorded (the stage runner's `runs[stage].engines` in its state
 * column), by capability (each is recorded by one stage), the speech entry with `timings` (where
 * the narration's word timings came from; null when not recorded). Empty for a resource none of
 * whose stages recorded one (not run yet, or made before engines were recorded).
 */
export function recordedEngines(state: Record<string, unknown> | null | undefined, timings: SpeechTimings = null): RecordEngines {
  const runs = state?.runs;
  const found: Partial<Record<string, EngineUse>> = {};
  if (runs && typeof runs === 'object') {
    for (const run of Object.values(runs as Record<string, { engines?: Record<string, unknown> } | null>)) {
      for (const [capability, value] of Object.entries(run?.engines ?? {})) found[capability] = readUse(value) ?? found[capability];
    }
  }
  const out: RecordEngines = {};
  for (const capability of CAPABILITIES) {
    const use = found[capability];
    if (!use) continue;
    if (capability === 'speech') out.speech = { ...use, timings };
    else out[capability] = use;
  }
  return out;
}
