// The moods of the music library: each a tempo, a key, two chord progressions (verse and
// variation, four bars each), an arrangement of instruments (pad, bass line, arpeggio or plucks,
// drum pattern) and a sound. chooseMood() picks one from a request's words and style.
// Everything is made here (./synth.ts), so the library is licence-clean.

export const MOODS = ['upbeat', 'calm', 'cinematic', 'playful', 'corporate', 'dramatic'] as const;
export type Mood = (typeof MOODS)[number];

/** A drum pattern: one bar of 16 sixteenth steps per voice ('x' hit, '.' rest). */
export interface Drums {
  kick: string;
  snare: string;
  hat: string;
  /** Low toms (a timpani-like hit) instead of a kick: cinematic and dramatic hits. */
  tom?: string;
}

export interface MoodSpec {
  bpm: number;
  /** MIDI note of the key's tonic (pad octave). */
  root: number;
  minor: boolean;
  /** Scale degrees (0 = I) of the chords, one per bar: the verse, then a variation. */
  verse: number[];
  variation: number[];
  /** Bass notes per bar: [sixteenth step, chord tone index (0 root, 1 third, 2 fifth), length in steps]. */
  bass: [number, number, number][];
  /** Arpeggio (chord tones cycling up) at this rate in steps, or none. */
  arp: { every: number; level: number } | null;
  drums: Drums | null;
  /** Brightness of the pad (number of harmonics) and its level. */
  pad: { harmonics: number; level: number };
}

export const MOOD_SPECS: Record<Mood, MoodSpec> = {
  upbeat: {
    bpm: 120,
    root: 60,
    minor: false,
    verse: [0, 4, 5, 3],
    variation: [5, 3, 0, 4],
    bass: [
      [0, 0, 3],
      [4, 0, 2],
      [6, 2, 2],
      [8, 0, 3],
      [12, 2, 2],
      [14, 1, 2],
    ],
    arp: { every: 2, level: 0.16 },
    drums: { kick: 'x...x...x...x...', snare: '....x.......x...', hat: 'x.x.x.x.x.x.x.xx' },
    pad: { harmonics: 4, level: 0.1 },
  },
  calm: {
    bpm: 76,
    root: 57,
    minor: false,
    verse: [0, 3, 5, 4],
    variation: [3, 0, 4, 5],
    bass: [
      [0, 0, 8],
      [8, 2, 8],
    ],
    arp: { every: 4, level: 0.14 },
    drums: null,
    pad: { harmonics: 3, level: 0.14 },
  },
  cinematic: {
    bpm: 84,
    root: 57,
    minor: true,
    verse: [0, 5, 2, 6],
    variation: [0, 3, 5, 4],
    bass: [
      [0, 0, 6],
      [6, 0, 2],
      [8, 0, 6],
      [14, 2, 2],
    ],
    arp: { every: 2, level: 0.09 },
    drums: { kick: '................', snare: '............x...', hat: '................', tom: 'x.....x.x.......' },
    pad: { harmonics: 5, level: 0.14 },
  },
  playful: {
    bpm: 128,
    root: 62,
    minor: false,
    verse: [0, 5, 3, 4],
    variation: [3, 4, 0, 5],
    bass: [
      [0, 0, 2],
      [3, 2, 1],
      [4, 0, 2],
      [8, 0, 2],
      [11, 2, 1],
      [12, 1, 2],
    ],
    arp: { every: 2, level: 0.2 },
    drums: { kick: 'x.....x.x.......', snare: '....x.......x..x', hat: '..x...x...x...x.' },
    pad: { harmonics: 2, level: 0.07 },
  },
  corporate: {
    bpm: 108,
    root: 59,
    minor: false,
    verse: [0, 4, 5, 3],
    variation: [3, 0, 4, 4],
    bass: [
      [0, 0, 2],
      [2, 0, 2],
      [4, 0, 2],
      [6, 0, 2],
      [8, 0, 2],
      [10, 0, 2],
      [12, 2, 2],
      [14, 0, 2],
    ],
    arp: { every: 1, level: 0.09 },
    drums: { kick: 'x.......x.......', snare: '....x.......x...', hat: '..x...x...x...x.' },
    pad: { harmonics: 3, level: 0.09 },
  },
  dramatic: {
    bpm: 96,
    root: 55,
    minor: true,
    verse: [0, 3, 4, 0],
    variation: [5, 3, 4, 4],
    bass: [
      [0, 0, 1],
      [1, 0, 1],
      [2, 0, 1],
      [3, 0, 1],
      [4, 0, 1],
      [5, 0, 1],
      [6, 0, 1],
      [7, 0, 1],
      [8, 0, 1],
      [9, 0, 1],
      [10, 0, 1],
      [11, 0, 1],
      [12, 2, 1],
      [13, 2, 1],
      [14, 1, 1],
      [15, 1, 1],
    ],
    arp: null,
    drums: { kick: '................', snare: '............x...', hat: '..x...x...x...x.', tom: 'x..x..x...x.....' },
    pad: { harmonics: 6, level: 0.13 },
  },
};

/** Words that call for a mood (lower case, matched as word starts). */
const CUES: Record<Mood, string[]> = {
  upbeat: ['upbeat', 'energ', 'fun', 'party', 'summer', 'workout', 'fitness', 'sale', 'launch', 'exciting', 'happy', 'fresh', 'sparkling'],
  calm: ['calm', 'relax', 'sleep', 'meditat', 'yoga', 'wellness', 'spa', 'soft', 'gentle', 'peace', 'mindful', 'cozy', 'tea'],
  cinematic: ['cinematic', 'epic', 'story', 'journey', 'travel', 'adventure', 'nature', 'film', 'documentary', 'history', 'space'],
  playful: ['playful', 'kid', 'child', 'toy', 'pet', 'dog', 'cat', 'game', 'cartoon', 'comic', 'silly', 'candy', 'snack'],
  corporate: [
    'corporate',
    'business',
    'tech',
    'software',
    'app',
    'saas',
    'startup',
    'finance',
    'product',
    'team',
    'data',
    'ai',
    'cloud',
    'rust',
    'code',
  ],
  dramatic: ['dramatic', 'intense', 'dark', 'thriller', 'mystery', 'crime', 'horror', 'war', 'urgent', 'warning', 'secret', 'power'],
};

/** The mood each faceless image style leans to when the words name none. */
const STYLE_MOODS: Record<string, Mood> = {
  cinematic: 'cinematic',
  watercolor: 'calm',
  comic: 'playful',
  minimal: 'corporate',
  neon: 'upbeat',
  vintage: 'calm',
};

/**
 * The mood of a request: an explicit mood name in `style`, else the mood whose cue words occur
 * most often in `text` (ties go to the earlier mood in MOODS), else the style's leaning, else upbeat.
 */
export function chooseMood(text: string, style?: string): Mood {
  const s = style?.toLowerCase();
  if (s && (MOODS as readonly string[]).includes(s)) return s as Mood;
  const words = text.toLowerCase().split(/[^\p{L}\p{N}]+/u);
  let best: Mood | undefined;
  let bestCount = 0;
  for (const mood of MOODS) {
    const count = words.filter((w) => CUES[mood].some((c) => w.startsWith(c) && (c.length > 3 || w === c))).length;
    if (count > bestCount) [best, bestCount] = [mood, count];
  }
  return best ?? (s ? STYLE_MOODS[s] : undefined) ?? 'upbeat';
}
