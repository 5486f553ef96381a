// Media samples the catalog links to but the repository does not hold: each built-in voice's
// spoken sample (voices/<id>.wav, eSpeak NG with the voice's own settings, in its language) and
// each public avatar's short video (avatars/<id>.mp4, its portrait with a slow push-in, H.264).
// They are made on first request, in a work folder under DATA_DIR/tmp, and kept in storage under
// catalog-samples/<path> (every node finds what one node made; storage writes whole objects only);
// one request makes a given sample at a time per process, and concurrent requests wait for it.
// Served like stored media (src/http/media.ts: range requests, ETag, a day of caching) at the very
// URLs the catalog and GET /assets give.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { findPublicAvatar, findVoice, PREVIEWS_DIR_URL, type RawAvatar, type RawVoice } from './catalog-data.ts';
import { inputArgs, runFfmpeg } from '../../media/ffmpeg.ts';
import { jobFolder } from '../../media/work-folder.ts';
import type { Storage } from '../../storage/index.ts';
import { catalogSampleKey } from '../../storage/keys.ts';

/** What a voice says in its sample, by language (the part of the eSpeak voice before "-" / "+"). */
const SAMPLE_TEXT: Record<string, (name: string) => string> = {
  en: (n) => `Hi, I'm ${n}. This is how your ads will sound in my voice.`,
  es: (n) => `Hola, soy ${n}. Así sonarán tus anuncios con mi voz.`,
  de: (n) => `Hallo, ich bin ${n}. So klingen deine Anzeigen mit meiner Stimme.`,
  fr: (n) => `Bonjour, je suis ${n}. Voici comment vos publicités sonneront avec ma voix.`,
  pt: (n) => `Olá, eu sou ${n}. É assim que seus anúncios vão soar com a minha voz.`,
  it: (n) => `Ciao, sono ${n}. Ecco come suoneranno i tuoi annunci con la mia voce.`,
  hi: (n) => `नमस्ते, मैं ${n} हूँ। आपके विज्ञापन मेरी आवाज़ में ऐसे सुनाई देंगे।`,
  // eSpeak NG reads Japanese kana, not kanji.
  ja: (n) => `こんにちは、${n} です。あなたの こうこくは、わたしの こえで こう きこえます。`,
};

export const sampleLanguage = (espeakVoice: string) => espeakVoice.split(/[-+]/)[0];

/** The sentence a voice speaks in its sample (English where its language has none). */
export function sampleText(voice: Pick<RawVoice, 'name' | 'espeak_voice'>): string {
  return (SAMPLE_TEXT[sampleLanguage(voice.espeak_voice)] ?? SAMPLE_TEXT.en)(voice.name);
}

/** Avatar videos: 720×900 (the portraits' 4:5), 25 fps, this many seconds. */
export const AVATAR_VIDEO = { width: 720, height: 900, fps: 25, seconds: 4 } as const;

export interface SampleFile {
  /** Path relative to the samples directory (the preview path: voices/<id>.wav, avatars/<id>.mp4). */
  relPath: string;
  contentType: string;
}

/** What speaks a voice's sample: the process's speech engine (src/engines/speech/), handed in by the caller. */
export interface Speaker {
  synthesize(
    text: string,
    outFile: string,
    opts: { voice: string; catalogVoice?: { id: string; gender?: string; language?: string }; timeoutMs?: number },
  ): Promise<unknown>;
}

/** Writes a sample into `out`. */
type MakeSample = (out: string, speech: Speaker) => Promise<void>;

/**
 * The sample a preview path names, when it is one we make: a built-in voice's declared preview
 * (.wav) or a public avatar's declared video (.mp4). Anything else: undefined.
 */
export function sampleFor(relPath: string): (SampleFile & { make: MakeSample }) | undefined {
  const m = /^(voices|avatars)\/([a-z0-9][a-z0-9-]*)\.(wav|mp4)$/.exec(relPath);
  if (!m) return undefined;
  const [, kind, id, ext] = m;
  if (kind === 'voices' && ext === 'wav') {
    const voice = findVoice(id);
    if (!voice || voice.preview !== relPath) return undefined;
    return { relPath, contentType: 'audio/wav', make: (out, speech) => makeVoiceSample(speech, voice, out) };
  }
  if (kind === 'avatars' && ext === 'mp4') {
    const avatar = findPublicAvatar(id);
    if (!avatar || avatar.video !== relPath) return undefined;
    return { relPath, contentType: 'video/mp4', make: (out) => makeAvatarVideo(avatar, out) };
  }
  return undefined;
}

async function makeVoiceSample(speech: Speaker, voice: RawVoice, out: string): Promise<void> {
  // The voice a customer gets from this deployment's speech engine (a hosted one maps the catalog voice).
  await speech.synthesize(sampleText(voice), out, {
    voice: voice.espeak_voice,
    catalogVoice: { id: voice.id, gender: voice.gender, language: voice.locale[0]?.split('-')[0] },
    timeoutMs: 60_000,
  });
}

async function makeAvatarVideo(avatar: RawAvatar, out: string): Promise<void> {
  const { width, height, fps, seconds } = AVATAR_VIDEO;
  const svg = fileURLToPath(new URL(avatar.image, PREVIEWS_DIR_URL));
  // Twice the output size, so the push-in (zoompan) crops from detail rather than upscaling.
  const png = `${out}.png`;
  await sharp(svg, { density: 144 })
    .resize(width * 2, height * 2, { fit: 'cover' })
    .png()
    .toFile(png);
  const frames = fps * seconds;
  try {
    await runFfmpeg(
      [
        ...inputArgs({ path: png, type: 'image/png' }, ['-loop', '1', '-framerate', String(fps)]),
        '-vf',
        `zoompan=z='1+0.08*on/${frames}':x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)':d=1:s=${width}x${height}:fps=${fps},format=yuv420p`,
        '-frames:v',
        String(frames),
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-crf',
        '23',
        '-movflags',
        '+faststart',
        '-an',
        '-f',
        'mp4',
        out,
      ],
      { expectedDurationSeconds: seconds, cwd: path.dirname(png) },
    );
  } finally {
    await fs.rm(png, { force: true });
  }
}

export interface SampleStore {
  /** Makes the sample unless storage holds it; resolves with its storage key. */
  ensure(sample: SampleFile & { make: MakeSample }): Promise<string>;
}

export function sampleStore(storage: Storage, dataDir: string, speech: Speaker): SampleStore {
  const inFlight = new Map<string, Promise<string>>();
  const build = async (sample: SampleFile & { make: MakeSample }) => {
    const key = catalogSampleKey(sample.relPath);
    if (await storage.exists(key)) return key;
    const dir = await jobFolder(dataDir, `sample-${randomBytes(6).toString('hex')}`);
    try {
      const out = path.join(dir, path.basename(sample.relPath));
      await sample.make(out, speech);
      await storage.put(key, { file: out }, sample.contentType);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
    return key;
  };
  return {
    ensure(sample) {
      let p = inFlight.get(sample.relPath);
      if (!p) {
        p = build(sample).finally(() => inFlight.delete(sample.relPath));
        inFlight.set(sample.relPath, p);
      }
      return p;
    },
  };
}
