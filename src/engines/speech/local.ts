// The local speech engine: Flite (./flite.ts) for the US English voices, eSpeak NG (./espeak.ts)
// for every other language and accent of the catalog (Flite speaks only English, and its one
// non-US voice is a Scottish man). bench/tts-eval.ts is how the choice was made.
import { synthesizeSpeech } from './espeak.ts';
import { fliteVoice, synthesizeFlite } from './flite.ts';
import type { SpeechEngine } from './types.ts';

export const LOCAL_SPEECH = 'flite+espeak-ng';

export const localSpeech: SpeechEngine = {
  name: LOCAL_SPEECH,
  synthesize: (text, outFile, opts) =>
    fliteVoice(opts.voice) ? synthesizeFlite(text, outFile, opts) : synthesizeSpeech(text, outFile, opts),
};
