// WAV files of 16-bit PCM with a 44-byte header: the speech engines' (mono) and the music library's
// (stereo, interleaved).

/** A WAV file of 16-bit PCM samples, interleaved when `channels` > 1 (little-endian `data`, as Int16Array memory is on every platform Node runs on). */
export function wav(data: Buffer | Int16Array, sampleRate: number, channels = 1): Buffer {
  const pcm = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2 * channels, 28);
  header.writeUInt16LE(2 * channels, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}
