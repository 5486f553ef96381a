// The lipsync capability: a video whose speaker's mouth is re-synced to an audio track (dubbing,
// script fixes). A GenerationJob in (../generation.ts) carrying the video (sourceVideo or
// motionVideo) and the audio track, one MP4 out. A generation asks for it when its AI model
// variant takes a video and an audio track alone (catalog input_mode [video, audio], as the Lip
// Sync variants: generationCapability in ../index.ts).
// Engines: Replicate and fal (../hosted/) when the variant's catalog entry names one of them and
// its key is configured (sync/lipsync-2 on Replicate today). Without one the local renderer
// (../local/ads.ts) makes the variant's stand-in video, as every unkeyed AI model variant is made.
import type { Provider } from '../generation.ts';

/** Makes a lip-synced video (see Provider in ../generation.ts). */
export type LipsyncEngine = Provider;
