// The video capability: a generation's video (video ad, UGC ad, video AI-model output): a
// GenerationJob in (../generation.ts: durationSeconds, generateAudio and, when given, the source
// or motion video and the audio track as files in the job's folder), one H.264/AAC MP4 out.
// Engines: the local renderer (../local/ads.ts, one ffmpeg run), and Replicate and fal
// (../hosted/) for an AI model variant whose catalog entry names one of them when that provider's
// key is configured. The registry (../index.ts) picks.
import type { Provider } from '../generation.ts';

/** Makes a generation's video (see Provider in ../generation.ts). */
export type VideoEngine = Provider;
