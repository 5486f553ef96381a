// The words of a template ad (src/engines/write/ad-copy.ts): the customer's copy verbatim, then the
// prompt's quoted copy verbatim, else short copy derived from the prompt that never pastes it.
import t from 'tap';
import { captionChunks, spokenChunks } from '../../src/engines/local/ad-video.ts';
import { adCopy, type AdCopyInput } from '../../src/engines/write/ad-copy.ts';

const job = (prompt: string, extra: Partial<AdCopyInput> = {}): AdCopyInput => ({
  prompt,
  title: 'Product Spotlight',
  type: 'static_ad',
  templateSlug: 'product-spotlight',
  ...extra,
});
const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

// The docs' own example prompts (spec/openapi.yaml), the prompts of the issue and of the tests, and
// a few a new user would write.
const PROMPTS = [
  'Our new citrus sparkling water on a sunny kitchen counter, headline "Zero sugar. All zest."',
  'Slow turntable reveal of the bottle with condensation droplets.',
  'Studio photo of a glass bottle of sparkling water, lime slices, soft shadows.',
  'Five quick tips for staying hydrated at work, ending with our sparkling water.',
  'Why sparkling water is the easiest healthy swap for soda, in three facts.',
  'Show off the STM32F3 Discovery board for embedded Rust beginners',
  'Create a summer sale ad for our new running shoes with 30% off. Light, fast and made for every day.',
  'A carousel about our new cold brew. Make it punchy.',
  'Create a 9:16 video ad showing a woman using our skincare serum in a bright bathroom, glowing skin in 14 days, cinematic lighting',
  'Promote our meditation app with a 7-day free trial, calm blue tones, tagline “Breathe in. Slow down.”',
  "Ad for our bakery's new sourdough, only $6, free delivery this weekend, button 'Order today'",
  'Handmade ceramic mugs for slow mornings',
  'A bottle of olive oil on marble',
  'Neon gaming keyboard with clicky switches',
  'Fresh lemonade on a sunny table',
  'Make an ad for fresh coffee beans',
];

t.test('a derived headline has at most 7 words, a CTA at most 3, and neither is the prompt', async (t) => {
  for (const prompt of PROMPTS) {
    const c = adCopy(job(prompt));
    t.ok(c.headline.length > 0, `${prompt}: a headline`);
    if (!/headline|tagline/.test(prompt)) t.ok(words(c.headline) <= 7, `${prompt}: "${c.headline}" has at most 7 words`);
    t.ok(words(c.cta) <= 3, `${prompt}: CTA "${c.cta}"`);
    if (words(prompt) > 7) t.not(c.headline.toLowerCase(), prompt.toLowerCase(), `${prompt}: the headline is not the prompt`);
    t.notMatch(c.headline, /^(?:create|make|show|off|promote|ad|studio|slow)\b/i, `${prompt}: no instruction in "${c.headline}"`);
    t.notMatch(c.headline, /\b(?:on a|in a|sunny|counter|shadows|cinematic|lighting)\b/i, `${prompt}: no scene in "${c.headline}"`);
    t.match(c.headline, /^[\p{Lu}\p{N}]/u, `${prompt}: "${c.headline}" starts with a capital`);
    for (const line of c.captions.split('\n')) {
      if (words(prompt) > 7) t.notOk(prompt.includes(line) && words(line) > 7, `${prompt}: caption "${line}" is not the prompt`);
    }
    if (words(prompt) > 7) t.notOk(c.captions.includes(prompt), `${prompt}: the captions do not carry the prompt word for word`);
  }
});

t.test('headlines a designer would write', async (t) => {
  const h = (p: string) => adCopy(job(p)).headline;
  const stm = adCopy(job('Show off the STM32F3 Discovery board for embedded Rust beginners'));
  t.same([stm.headline, stm.subheadline], ['STM32F3 Discovery board', 'For embedded Rust beginners'], 'the purpose is the second line');
  t.equal(h('Why sparkling water is the easiest healthy swap for soda, in three facts.'), 'Sparkling water: the easiest healthy swap');
  t.equal(h('Studio photo of a glass bottle of sparkling water, lime slices, soft shadows.'), 'Glass bottle of sparkling water');
  t.equal(h('Five quick tips for staying hydrated at work, ending with our sparkling water.'), 'Five quick tips for staying hydrated');
  t.equal(h('Create a summer sale ad for our new running shoes with 30% off.'), 'Summer sale: our new running shoes');
  t.equal(h('Create a 9:16 video ad showing a woman using our skincare serum in a bright bathroom'), 'Our skincare serum');
  t.equal(h('Fresh lemonade on a sunny table'), 'Fresh lemonade');
  t.equal(h(''), 'Product Spotlight', 'no prompt: the title');
  t.equal(h('A carousel about our new cold brew. Make it punchy.'), 'Meet our new cold brew');
});

t.test('quoted copy after a label is used verbatim and not derived from', async (t) => {
  const c = adCopy(job('Our new citrus sparkling water on a sunny kitchen counter, headline "Zero sugar. All zest."'));
  t.equal(c.headline, 'Zero sugar. All zest.');
  t.equal(c.subheadline, 'Meet our new citrus sparkling water', 'the subject becomes the second line');
  t.notMatch(c.captions, /headline|sunny/i);
  const d = adCopy(job('Citrus sparkling water. headline "Zero sugar. All fizz." CTA: "Try it free"'));
  t.equal(d.headline, 'Zero sugar. All fizz.');
  t.equal(d.cta, 'Try it free');
  const curly = adCopy(job('Meditation app, tagline “Breathe in. Slow down.”, call to action ‘Don’t wait’'));
  t.equal(curly.headline, 'Breathe in. Slow down.');
  t.equal(curly.cta, 'Don’t wait', 'curly single quotes, with an apostrophe inside');
  const labelled = adCopy(job('Sourdough loaf, subheadline "Baked at 4 am", offer "2 for $9"'));
  t.equal(labelled.subheadline, 'Baked at 4 am');
  t.equal(labelled.offer, '2 for $9');
  t.equal(labelled.headline, 'Sourdough loaf');
});

t.test("the customer's copy comes first, verbatim", async (t) => {
  const copy = { headline: 'Zero sugar, all zest', subheadline: 'Citrus sparkling water', cta: 'Grab a can', offer: '2 for $5' };
  const c = adCopy(job('Our new citrus sparkling water, headline "Something else" CTA "Other"', { copy }));
  t.equal(c.headline, copy.headline);
  t.equal(c.subheadline, copy.subheadline);
  t.equal(c.cta, copy.cta);
  t.equal(c.offer, copy.offer);
  t.same(c.captions.split('\n'), [copy.headline, copy.subheadline, copy.offer, copy.cta], 'captions are the copy, in reading order');
  const part = adCopy(job('Cold brew coffee with 20% off this week', { copy: { headline: 'Cold. Brewed. Yours.' } }));
  t.equal(part.headline, 'Cold. Brewed. Yours.');
  t.equal(part.subheadline, 'Cold brew coffee', 'the rest is derived');
  t.equal(part.offer, '20% off this week');
});

t.test('an offer only when the prompt states one; a subheadline when it has a benefit', async (t) => {
  t.equal(adCopy(job('Handmade ceramic mugs for slow mornings')).offer, null);
  t.equal(adCopy(job('Handmade ceramic mugs for slow mornings')).subheadline, 'For slow mornings');
  t.equal(adCopy(job('Handmade ceramic mugs for slow mornings')).headline, 'Handmade ceramic mugs');
  t.equal(adCopy(job('Neon gaming keyboard with clicky switches')).subheadline, null, 'no benefit, no purpose: no second line');
  t.equal(adCopy(job('Fresh lemonade, 20% off')).offer, '20% off');
  t.equal(adCopy(job('Fresh lemonade, 20% off')).badge, '-20%');
  t.equal(adCopy(job('Running socks with free shipping')).offer, 'Free shipping');
  t.equal(adCopy(job('Sourdough, only $6, free delivery')).offer, 'Only $6 + free delivery');
  t.equal(adCopy(job('Meditation app with a 7-day free trial')).offer, '7-day free trial');
  t.equal(adCopy(job('Meditation app with a 7-day free trial')).cta, 'Try it free');
  const shoes = adCopy(job('Create a summer sale ad for our new running shoes with 30% off. Light, fast and made for every day.'));
  t.equal(shoes.subheadline, 'Light, fast and made for every day');
  t.equal(shoes.offer, '30% off');
  t.equal(adCopy(job('A carousel about our new cold brew. Make it punchy.')).subheadline, null, 'an instruction is not a benefit');
});

t.test('a video ad shows each line of the copy as a caption of its own, whole lines dropped without an ellipsis', async (t) => {
  const c = adCopy(job('Create a summer sale ad for our new running shoes with 30% off. Light, fast and made for every day.'));
  const chunks = captionChunks(c.captions, 24, 10).map((lines) => lines.join(' '));
  t.same(chunks, ['Summer sale: our new running shoes', 'Light, fast and made for every day', '30% off', 'Shop now']);
  t.same(
    captionChunks(c.captions, 24, 3).map((lines) => lines.join(' ')),
    ['Summer sale: our new running shoes', 'Light, fast and made for every day', '30% off'],
  );
  t.same(captionChunks('one two three four five six seven', 9, 1), [['one two', 'three…']], 'a line cut short ends with an ellipsis');
});

t.test(
  'a long subject sentence is cut at its verb or a clause, never in the middle of a phrase; the rest is the second line',
  async (t) => {
    const stain = adCopy(job('Our stain remover takes a wine-stained white shirt back to spotless'));
    t.equal(stain.headline, 'Our stain remover', 'the subject before its verb (was "Our stain remover takes a wine-stained white")');
    t.equal(stain.subheadline, 'Takes a wine-stained white shirt back to spotless', 'the rest, whole, under it');
    t.equal(
      adCopy(job('An honest review of our noise-cancelling earbuds after a month')).headline,
      'Honest review of our noise-cancelling earbuds',
    );
  },
);

t.test('spoken captions leave no widow: a sentence’s last word alone takes the word before it', async (t) => {
  const said = 'Here is what nobody tells you about how much you save.'.split(' ');
  const words = said.map((text, i) => ({ text, startMs: i * 300, endMs: i * 300 + 250 }));
  const chunks = spokenChunks(words, 16);
  t.same(chunks.map((c) => c.lines.join(' ')).join(' '), said.join(' '), 'every word once, in order');
  for (const c of chunks) t.ok(c.lines.join(' ').split(' ').length > 1, `"${c.lines.join(' ')}" is more than one word`);
});

t.test('a two-line spoken caption is split where its lines are most even', async (t) => {
  const said = 'noise-cancelling earbuds after.'.split(' ');
  const [chunk] = spokenChunks(
    said.map((text, i) => ({ text, startMs: i * 300, endMs: i * 300 + 250 })),
    24,
  );
  t.same(chunk.lines, ['noise-cancelling', 'earbuds after.'], 'not "noise-cancelling earbuds" over "after."');
});
