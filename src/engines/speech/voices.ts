// Which voice of a hosted speech engine speaks a catalog voice: the operator's map (SPEECH_VOICES,
// ELEVENLABS_VOICES, FAL_SPEECH_VOICES: `{"<catalog voice id>": "<provider voice>"}`, with optional `female`, `male`,
// `neutral` and `default` entries), else the engine's default for the voice's gender. A caller
// that names no catalog voice (a voice sample, the editor's add_voiceover) is mapped by the
// gender of its eSpeak voice's variant (+f3 female, +m3 male).
import type { VoiceMap } from '../../config.ts';
import type { SpeechOptions } from './types.ts';

/** An engine's voices by gender; `default` for any other. */
export type GenderDefaults = { female: string; male: string; default: string };

function genderOf(opts: SpeechOptions): string {
  if (opts.catalogVoice?.gender) return opts.catalogVoice.gender;
  const variant = /\+([fm])\d/.exec(opts.voice)?.[1];
  return variant === 'f' ? 'female' : variant === 'm' ? 'male' : 'neutral';
}

/** The provider voice for these options under `map`, falling back to `defaults` by gender. */
export function providerVoice(map: VoiceMap, defaults: GenderDefaults, opts: SpeechOptions): string {
  const gender = genderOf(opts);
  const own = (key: string | undefined) => (key !== undefined && Object.hasOwn(map, key) ? map[key] : undefined);
  return (
    own(opts.catalogVoice?.id) ??
    own(gender) ??
    own('default') ??
    (gender === 'female' || gender === 'male' ? defaults[gender] : defaults.default)
  );
}
