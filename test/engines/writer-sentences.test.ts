// The local writer's scripts and slides read as written by a person (issue 24): whole sentences
// (no prompt fragment spliced into a template sentence, no sentence cut short), the subject in its
// right case mid-sentence, exactly as many items as the script announces, in every language of
// the packs; slide copy that differs per slide and carries the brief's and the product's facts.
import t from 'tap';
import { sentences } from '../../src/pipelines/faceless-video/plan.ts';
import { sceneTitle } from '../../src/engines/write/brief.ts';
import { writeLocalScript, writeLocalSlides } from '../../src/engines/write/local.ts';
import type { Script } from '../../src/engines/write/types.ts';

const all = (s: Script) => [s.hook, ...s.beats, s.callToAction].join(' ');
const script = (prompt: string, language = 'en', seconds = 30) =>
  writeLocalScript({ prompt, language, targetSeconds: seconds * 0.9, wordsPerSecond: 2.6 });

const PROMPTS = [
  'Why embedded Rust is worth learning for firmware developers: three reasons',
  'Five quick tips for staying hydrated at work, ending with our sparkling water.',
  'Why sparkling water is the easiest healthy swap for soda, in three facts.',
  'Show off the STM32F3 Discovery board for embedded Rust beginners',
  'Make a video about our new cold brew coffee. It is brewed for 18 hours. It has less acid, so it is gentle on the stomach.',
  'Three habits that changed my mornings: I drink water before coffee, I walk ten minutes outside, and I write down one goal for the day',
];

t.test('scripts are whole sentences: no fragment of the prompt spliced in, none cut short', async (t) => {
  for (const prompt of PROMPTS) {
    for (const seconds of [15, 30, 60]) {
      const text = all(script(prompt, 'en', seconds));
      t.notMatch(
        text,
        /\b(?:with|about|to|of|enjoy|from|try) (?:Why|Show|Five|Three|Make)\b/,
        `${prompt} ${seconds}s: no prompt spliced: ${text}`,
      );
      for (const s of sentences(text)) {
        t.match(s, /^[\p{Lu}\p{N}]/u, `"${s}" starts with a capital`);
        t.match(s, /[.!?]$/, `"${s}" ends as a sentence`);
        t.notMatch(s, /\b(?:the|a|an|of|for|with|and|to|is|at)[.!?]$/i, `"${s}" is not cut short`);
        t.notMatch(s, /[,;:][.!?]$/, `"${s}" has no clause punctuation before its end`);
      }
    }
  }
  // A faceless video without a title is titled with its prompt's first 80 characters: not a subject.
  const titled = writeLocalScript({
    prompt: PROMPTS[0],
    title: PROMPTS[0].slice(0, 60),
    language: 'en',
    targetSeconds: 27,
    wordsPerSecond: 2.6,
  });
  t.notMatch(all(titled), /about Why|with Why/, `a title cut from the prompt is not spliced in: ${all(titled)}`);
  t.match(all(titled), /embedded Rust/);
  const rust = all(script(PROMPTS[0]));
  t.match(rust, /embedded Rust/, 'the subject is the noun phrase');
  t.notMatch(rust, /Small changes with Why/);
});

t.test("a counted list names each item with the brief's facts, and announces no more items than it has", async (t) => {
  const cases: [string, string, string[], RegExp][] = [
    [
      'Why sparkling water is the easiest healthy swap for soda: zero sugar, real fizz, and it keeps you hydrated all day.',
      'en',
      ['zero sugar', 'real fizz', 'it keeps you hydrated all day'],
      /^Here are three reasons why sparkling water is the easiest healthy swap for soda\./,
    ],
    [
      PROMPTS[5],
      'en',
      ['I drink water before coffee', 'I walk ten minutes outside', 'I write down one goal for the day'],
      /^Here are three habits/,
    ],
    // Five announced, three given: three are announced.
    [
      'Five tips for better sleep: no screens after ten, a cool dark room, and the same wake-up time every day',
      'en',
      ['no screens after ten', 'a cool dark room', 'the same wake-up time every day'],
      /^Here are three tips for better sleep\./,
    ],
    [
      'Cinco consejos para dormir mejor: sin pantallas de noche, una habitación fresca, y la misma hora cada día',
      'es',
      ['sin pantallas de noche', 'una habitación fresca', 'la misma hora cada día'],
      /^Aquí tienes tres consejos/,
    ],
  ];
  for (const [prompt, language, items, hook] of cases) {
    for (const seconds of [15, 30, 60]) {
      const s = script(prompt, language, seconds);
      t.equal(s.beats.length, items.length, `${prompt} (${seconds}s): one beat per item`);
      t.match(s.hook, hook, `${language} ${seconds}s: the hook announces the items it delivers: ${s.hook}`);
      items.forEach((item, i) => {
        t.ok(s.beats[i].includes(`: ${item}`), `item ${i + 1} says what it is: ${s.beats[i]}`);
        t.match(s.titles?.[i + 1] ?? '', new RegExp(`^0${i + 1} · \\p{L}`, 'u'), `item ${i + 1}'s title is its number and its name`);
      });
      for (const sentence of sentences(all(s))) t.notMatch(sentence, /^(?:Number|Número|Numéro) \S+[.!?]$/u, `no bare "${sentence}"`);
    }
  }
  // Announced but not given: nothing is counted.
  for (const prompt of [
    PROMPTS[0],
    'Three reasons embedded Rust is winning firmware teams over',
    'How to brew better coffee at home in four steps',
  ]) {
    const text = all(script(prompt, 'en', 30));
    t.notMatch(text, /\b(?:three|four) (?:reasons|steps)\b|Number (?:one|two|three)/, `no count it cannot deliver: ${text}`);
  }
  t.match(script('How to brew better coffee at home in four steps').hook, /^Here's how to brew better coffee at home\./);
});

t.test('every part has an on-screen title: a phrase of the brief or of what the part says, never a bag of words', async (t) => {
  const squash = (x: string) =>
    x
      .toLowerCase()
      .replace(/^\d\d · /, '')
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  const s = script('Why sparkling water is the easiest healthy swap for soda: zero sugar, real fizz, and it keeps you hydrated all day.');
  t.same(s.titles, [
    'Sparkling water: 3 reasons',
    '01 · Zero sugar',
    '02 · Real fizz',
    '03 · Keeps you hydrated all day',
    'Follow for more',
  ]);
  for (const prompt of PROMPTS)
    for (const seconds of [15, 30, 60]) {
      const w = script(prompt, 'en', seconds);
      t.equal(w.titles?.length, w.beats.length + 2, 'one title per part');
      for (const title of w.titles ?? []) {
        const n = squash(title).split(' ').length;
        t.ok(n >= 1 && n <= 6, `"${title}": at most six words`);
      }
    }
  // A given sentence's title is a phrase of it (the words in their order, side by side).
  const phrases: [string, string][] = [
    ['Number one. Everyday life gets simpler with sparkling water.', 'Everyday life gets simpler'],
    ['Now the good part. Beginners and experts alike get value from embedded Rust.', 'Beginners and experts alike get value'],
    ['Soda swaps made easy: zero sugar, real fizz.', 'Zero sugar'],
    ['Sparkling water is the easiest healthy swap for soda.', 'Sparkling water'],
    ['Sparkling water is the easiest swap for soda.', 'Sparkling water is the easiest swap'],
    ['Cities are planting tiny forests, and what they change.', 'Cities are planting tiny forests'],
  ];
  for (const [sentence, title] of phrases) {
    t.equal(sceneTitle(sentence), title, sentence);
    t.ok(squash(sentence).includes(squash(sceneTitle(sentence))), `"${sceneTitle(sentence)}" is a phrase of "${sentence}"`);
  }
});

t.test('the three languages of the slideshow tests write whole sentences about the subject', async (t) => {
  const cases: [string, string, RegExp][] = [
    ['en', 'Why sparkling water is the easiest healthy swap for soda', /sparkling water/],
    ['es', 'Por qué el agua con gas es el cambio más fácil para dejar los refrescos', /el agua con gas|al agua con gas/],
    ['fr', "Pourquoi l'eau pétillante est le meilleur choix pour remplacer le soda", /l'eau pétillante/],
  ];
  for (const [language, prompt, subject] of cases) {
    const s = script(prompt, language);
    const text = all(s);
    t.match(text, subject, `${language}: ${text}`);
    t.notMatch(text, /\b(?:Por qué|Pourquoi|Why) /, `${language}: no question spliced into a sentence`);
    t.notMatch(text, /\ba el\b|\bde le\b/, `${language}: articles contracted`);
  }
});

t.test('slide copy differs per slide and carries the brief and the product context', async (t) => {
  const copy = writeLocalSlides({
    prompt: 'A carousel about our new cold brew. Make it punchy.',
    productContext: 'Cold brew steeped 18 hours. Half the acidity of hot coffee. Comes in oat and classic.',
    language: 'en',
    slideCount: 6,
  });
  const bodies = copy.slides.map((s) => s.body);
  t.equal(new Set(bodies).size, bodies.length, `every slide's body differs: ${JSON.stringify(bodies)}`);
  for (const fact of ['Cold brew steeped 18 hours.', 'Half the acidity of hot coffee.', 'Comes in oat and classic.'])
    t.ok(
      bodies.some((b) => b.includes(fact)),
      fact,
    );
  t.notOk(
    bodies.some((b) => /Make it punchy/.test(b)),
    'an instruction is not slide copy',
  );
  const why = writeLocalSlides({
    prompt: 'Why sparkling water is the easiest healthy swap for soda. It has zero sugar. It keeps you hydrated.',
    language: 'en',
    slideCount: 5,
  });
  const text = why.slides.map((s) => s.body).join(' ');
  t.match(text, /Sparkling water is the easiest healthy swap for soda\./, 'the claim is a slide');
  t.match(text, /It has zero sugar\./);
  t.notMatch(text, /Why sparkling water/, 'not the question pasted');
  t.equal(new Set(why.slides.map((s) => s.body)).size, 5);
  const calm = writeLocalSlides({ prompt: 'Five habits of calm mornings. Start with water, then light.', language: 'en', slideCount: 5 });
  t.ok(
    calm.slides.some((s) => s.body === 'Start with water, then light.'),
    'a sentence that starts like an instruction but is content is kept',
  );
  const shoes = writeLocalSlides({ prompt: 'Create a carousel for our new running shoes with 30% off.', language: 'en', slideCount: 4 });
  t.equal(shoes.title, 'Our new running shoes', 'the format ("a carousel for") is not the subject');
});
