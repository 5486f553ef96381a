// The editor's built-in sound effect library: real short audio files, synthesized
// deterministically by ffmpeg's lavfi sources the first time they are needed and kept in
// storage under sound-effects/<id>.wav (the same bytes on every machine).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { components } from '../../generated/openapi.d.ts';
import type { Storage } from '../storage/index.ts';
import { soundEffectKey } from '../storage/keys.ts';
import { runFfmpeg } from './ffmpeg.ts';

/** A sound effect as the contract lists it (but its URL), and how it is made. */
export type SoundEffectDef = Omit<components['schemas']['SoundEffect'], 'preview_url'> & {
  /** ffmpeg -filter_complex graph producing [out] (mono or stereo, any rate). */
  graph: string;
};

const d = (s: number) => s.toFixed(3);

/** Noise shaped by filters and an envelope. */
const noise = (dur: number, color: string, shape: string, seed: number) =>
  `anoisesrc=d=${d(dur)}:c=${color}:a=0.8:r=44100:s=${seed},${shape}[out]`;

export const SOUND_EFFECTS: SoundEffectDef[] = [
  {
    id: 'whoosh-short',
    name: 'Whoosh (short)',
    category: 'transition',
    tags: ['whoosh', 'swoosh', 'swipe', 'transition', 'fast'],
    duration_seconds: 0.6,
    graph: noise(0.6, 'pink', 'highpass=f=400,lowpass=f=3500,afade=t=in:d=0.35:curve=exp,afade=t=out:st=0.35:d=0.25,volume=2.2', 11),
  },
  {
    id: 'whoosh-long',
    name: 'Whoosh (long)',
    category: 'transition',
    tags: ['whoosh', 'swoosh', 'transition', 'slow', 'air'],
    duration_seconds: 1.4,
    graph: noise(1.4, 'pink', 'highpass=f=250,lowpass=f=2500,afade=t=in:d=0.9:curve=qsin,afade=t=out:st=0.9:d=0.5,volume=2', 12),
  },
  {
    id: 'riser',
    name: 'Riser',
    category: 'transition',
    tags: ['riser', 'build', 'tension', 'sweep', 'up'],
    duration_seconds: 2,
    graph: `aevalsrc=exprs='0.35*sin(2*PI*(200*t+350*t*t))*(t/2)':d=2:s=44100,afade=t=out:st=1.9:d=0.1[out]`,
  },
  {
    id: 'downer',
    name: 'Downer sweep',
    category: 'transition',
    tags: ['drop', 'down', 'sweep', 'fall'],
    duration_seconds: 1.2,
    graph: `aevalsrc=exprs='0.4*sin(2*PI*(900*t-300*t*t))*exp(-1.5*t)':d=1.2:s=44100,afade=t=out:st=1:d=0.2[out]`,
  },
  {
    id: 'pop',
    name: 'Pop',
    category: 'ui',
    tags: ['pop', 'bubble', 'appear', 'ui'],
    duration_seconds: 0.15,
    graph: `aevalsrc=exprs='0.6*sin(2*PI*(500*t+6000*t*t))*exp(-35*t)':d=0.15:s=44100[out]`,
  },
  {
    id: 'click',
    name: 'Click',
    category: 'ui',
    tags: ['click', 'tap', 'button', 'ui'],
    duration_seconds: 0.06,
    graph: noise(0.06, 'white', 'highpass=f=2000,afade=t=out:d=0.06:curve=exp,volume=1.5', 13),
  },
  {
    id: 'camera-shutter',
    name: 'Camera shutter',
    category: 'ui',
    tags: ['camera', 'shutter', 'photo', 'snap'],
    duration_seconds: 0.3,
    graph: `aevalsrc=exprs='(random(0)-0.5)*1.2*(exp(-60*t)+exp(-60*abs(t-0.14))*gte(t,0.14))':d=0.3:s=44100,highpass=f=1500[out]`,
  },
  {
    id: 'ding',
    name: 'Ding',
    category: 'notification',
    tags: ['ding', 'bell', 'notification', 'correct'],
    duration_seconds: 1.2,
    graph: `aevalsrc=exprs='(0.45*sin(2*PI*1320*t)+0.2*sin(2*PI*2640*t))*exp(-4*t)':d=1.2:s=44100[out]`,
  },
  {
    id: 'chime',
    name: 'Chime',
    category: 'notification',
    tags: ['chime', 'success', 'notification', 'bright'],
    duration_seconds: 1,
    graph: `aevalsrc=exprs='0.4*sin(2*PI*880*t)*exp(-6*t)+0.4*sin(2*PI*1318.5*t)*exp(-5*(t-0.15))*gte(t,0.15)':d=1:s=44100[out]`,
  },
  {
    id: 'coin',
    name: 'Coin',
    category: 'ui',
    tags: ['coin', 'reward', 'game', 'collect'],
    duration_seconds: 0.45,
    graph: `aevalsrc=exprs='0.3*(2*gte(sin(2*PI*if(lt(t,0.08),988,1319)*t),0)-1)*exp(-6*t)':d=0.45:s=44100,lowpass=f=6000[out]`,
  },
  {
    id: 'error-buzz',
    name: 'Error buzz',
    category: 'notification',
    tags: ['error', 'wrong', 'buzz', 'fail'],
    duration_seconds: 0.45,
    graph: `aevalsrc=exprs='0.25*(2*gte(sin(2*PI*150*t),0)-1)':d=0.45:s=44100,lowpass=f=2500,afade=t=out:st=0.35:d=0.1[out]`,
  },
  {
    id: 'boom',
    name: 'Boom',
    category: 'impact',
    tags: ['boom', 'impact', 'hit', 'bass', 'cinematic'],
    duration_seconds: 1.6,
    graph: `aevalsrc=exprs='0.8*sin(2*PI*(70*t-12*t*t))*exp(-2.5*t)+0.3*(random(0)-0.5)*exp(-12*t)':d=1.6:s=44100,lowpass=f=900[out]`,
  },
  {
    id: 'thud',
    name: 'Thud',
    category: 'impact',
    tags: ['thud', 'impact', 'drop', 'hit'],
    duration_seconds: 0.5,
    graph: `aevalsrc=exprs='0.8*sin(2*PI*(110*t-60*t*t))*exp(-10*t)':d=0.5:s=44100,lowpass=f=600[out]`,
  },
  {
    id: 'boing',
    name: 'Boing',
    category: 'comedy',
    tags: ['boing', 'spring', 'funny', 'cartoon', 'bounce'],
    duration_seconds: 0.8,
    graph: `aevalsrc=exprs='0.5*sin(2*PI*(300*t+40*sin(2*PI*12*t)/(2*PI*12)*12))*exp(-3*t)':d=0.8:s=44100[out]`,
  },
  {
    id: 'rain-ambience',
    name: 'Rain ambience',
    category: 'ambience',
    tags: ['rain', 'ambience', 'background', 'calm', 'weather'],
    duration_seconds: 6,
    graph: noise(6, 'pink', 'lowpass=f=5000,highpass=f=300,afade=t=in:d=0.5,afade=t=out:st=5.5:d=0.5,volume=0.9', 14),
  },
];

export const SOUND_EFFECTS_BY_ID = new Map(SOUND_EFFECTS.map((s) => [s.id, s]));

const pending = new Map<string, Promise<string>>();

/** Makes sure the effect's file exists in storage (synthesized once); returns its storage key. */
export function ensureSoundEffect(storage: Storage, id: string): Promise<string> {
  const def = SOUND_EFFECTS_BY_ID.get(id);
  if (!def) return Promise.reject(new Error(`unknown sound effect ${id}`));
  const key = soundEffectKey(id);
  let p = pending.get(`${id}`);
  if (!p) {
    p = (async () => {
      if (await storage.exists(key)) return key;
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sfx-'));
      try {
        const out = path.join(dir, `${id}.wav`);
        await runFfmpeg([
          '-filter_complex',
          def.graph,
          '-map',
          '[out]',
          '-ac',
          '2',
          '-ar',
          '44100',
          '-c:a',
          'pcm_s16le',
          '-t',
          d(def.duration_seconds),
          out,
        ]);
        await storage.put(key, { file: out }, 'audio/wav');
        return key;
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    })();
    pending.set(id, p);
    p.catch(() => pending.delete(id));
  }
  return p;
}

/**
 * The library, optionally filtered: `query` matches words of the id, name, category and tags
 * (every word must match), `category` is exact. Files are synthesized on first listing so the
 * preview URLs work. For the MCP tool list_editor_sound_effects.
 */
export async function listSoundEffects(
  storage: Storage,
  opts: { query?: string; category?: string; limit?: number } = {},
): Promise<components['schemas']['SoundEffect'][]> {
  const words = (opts.query ?? '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const matches = SOUND_EFFECTS.filter((s) => {
    if (opts.category && s.category !== opts.category) return false;
    const hay = [s.id, s.name, s.category, ...s.tags].join(' ').toLowerCase();
    return words.every((w) => hay.includes(w));
  }).slice(0, opts.limit ?? 50);
  await Promise.all(matches.map((s) => ensureSoundEffect(storage, s.id)));
  return matches.map((s) => ({
    id: s.id,
    name: s.name,
    category: s.category,
    duration_seconds: s.duration_seconds,
    tags: s.tags,
    preview_url: storage.signedUrl(soundEffectKey(s.id)),
  }));
}
