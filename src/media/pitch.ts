// The fundamental frequency (pitch) of a voice sample: the first 20 s decoded by ffmpeg (forced
// demuxer, see ffmpeg.ts) to 16 kHz mono PCM, cut in 64 ms frames (32 ms hop); each frame loud
// enough to be speech gets the lag of its normalized autocorrelation peak between 60 and 400 Hz
// (the shortest lag within 90 % of the best, so a period's multiples are not mistaken for it);
// the estimate is the median over those frames. Unvoiced and silent frames are skipped.
import fs from 'node:fs/promises';
import path from 'node:path';
import { inputArgs, runFfmpeg, type MediaFile } from './ffmpeg.ts';

const RATE = 16_000;
const FRAME = 1024;
const HOP = 512;
const MIN_HZ = 60;
const MAX_HZ = 400;
/** Seconds of the sample analysed at most. */
const ANALYSED_SECONDS = 20;

/** F0 (Hz) of each voiced frame of PCM samples (Float32, `rate` Hz), in order; unvoiced and silent frames are left out. */
export function pitchTrack(pcm: Float32Array, rate = RATE): number[] {
  const minLag = Math.floor(rate / MAX_HZ);
  const maxLag = Math.ceil(rate / MIN_HZ);
  const frame = Math.max(FRAME, maxLag * 2);
  let peakAbs = 0;
  for (const v of pcm) peakAbs = Math.max(peakAbs, Math.abs(v));
  if (peakAbs === 0) return [];
  const estimates: number[] = [];
  for (let start = 0; start + frame + maxLag <= pcm.length; start += HOP) {
    let energy = 0;
    for (let i = start; i < start + frame; i++) energy += pcm[i] * pcm[i];
    const rms = Math.sqrt(energy / frame);
    if (rms < peakAbs * 0.05) continue;
    const scores = new Float64Array(maxLag + 1);
    let best = 0;
    for (let lag = minLag; lag <= maxLag; lag++) {
      let cross = 0;
      let e2 = 0;
      for (let i = start; i < start + frame; i++) {
        cross += pcm[i] * pcm[i + lag];
        e2 += pcm[i + lag] * pcm[i + lag];
      }
      const r = e2 > 0 ? cross / Math.sqrt(energy * e2) : 0;
      scores[lag] = r;
      if (r > best) best = r;
    }
    if (best < 0.5) continue;
    let lag = minLag;
    while (lag <= maxLag && scores[lag] < best * 0.9) lag++;
    // Refine around the peak of that lobe.
    while (lag < maxLag && scores[lag + 1] > scores[lag]) lag++;
    estimates.push(rate / lag);
  }
  return estimates;
}

/** Median F0 of PCM samples (Float32, RATE Hz), or null when no frame is voiced. */
export function estimatePitch(pcm: Float32Array, rate = RATE): number | null {
  const estimates = pitchTrack(pcm, rate);
  if (!estimates.length) return null;
  estimates.sort((a, b) => a - b);
  return estimates[Math.floor(estimates.length / 2)];
}

/** The estimated pitch (Hz) of an audio file inside `workDir` (a folder the caller owns). */
export async function samplePitch(file: MediaFile, workDir: string): Promise<number | null> {
  const out = path.join(workDir, 'pitch.pcm');
  await runFfmpeg([...inputArgs(file, ['-t', String(ANALYSED_SECONDS)]), '-vn', '-ac', '1', '-ar', String(RATE), '-f', 's16le', out], {
    cwd: workDir,
  });
  const raw = await fs.readFile(out);
  const pcm = new Float32Array(Math.floor(raw.length / 2));
  for (let i = 0; i < pcm.length; i++) pcm[i] = raw.readInt16LE(i * 2) / 32768;
  return estimatePitch(pcm);
}
