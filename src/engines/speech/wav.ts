// The WAV files of the speech engines: 16-bit mono PCM with a 44-byte header (../../media/wav.ts).
export { wav } from '../../media/wav.ts';

/** Speech engines write their WAV files at this rate (22.05 kHz mono, 16-bit). */
export const SPEECH_SAMPLE_RATE = 22050;
