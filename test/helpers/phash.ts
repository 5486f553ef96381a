// Perceptual-hash distance of two pictures (sharp-phash, 64 bits): 0 alike, ≥ 10 visibly different.
import phashModule from 'sharp-phash';

// sharp-phash is CommonJS (module.exports = phash); its typings declare an ES default export.
const phash = phashModule as unknown as (image: Buffer) => Promise<string>;

export async function phashDistance(a: Buffer, b: Buffer): Promise<number> {
  const [x, y] = await Promise.all([phash(a), phash(b)]);
  let d = 0;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) d++;
  return d;
}
