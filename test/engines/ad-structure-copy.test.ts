// The words of a static template's structure (src/engines/write/ad-copy.ts adStructure): taken
// from the customer's copy and the prompt, never invented (no points, statistics or names the brief
// does not state), and absent when the brief gives nothing to fill them with.
import t from 'tap';
import { adCopy, adStructure, offerHero, quoteFrom, type AdStructureInput } from '../../src/engines/write/ad-copy.ts';

const job = (templateSlug: string, prompt: string, extra: Partial<AdStructureInput> = {}): AdStructureInput => ({
  prompt,
  title: templateSlug,
  type: 'static_ad',
  templateSlug,
  ...extra,
});
/** Every word of `text` is a word of `source` (case and punctuation aside). */
const wordsOf = (s: string): string[] => s.toLowerCase().match(/[\p{L}\p{N}'-]+/gu) ?? [];
const fromBrief = (text: string, source: string) => wordsOf(text).every((w) => wordsOf(source).includes(w));

t.test('a comparison: the two sides and the points the prompt names', async (t) => {
  const prompt = 'Why our oat milk beats dairy: less water, less land, same creamy coffee';
  t.same(adStructure(job('us-vs-them-comparison', prompt)), {
    kind: 'comparison',
    us: 'Oat milk',
    them: 'Dairy',
    points: ['Less water', 'Less land', 'Same creamy coffee'],
  });
  const vs = adStructure(
    job('us-vs-them-comparison', 'Our steel bottle vs plastic bottles: keeps drinks cold, lasts for years and no microplastics'),
  );
  t.ok(
    vs?.kind === 'comparison' && vs.points.every((p) => fromBrief(p, 'keeps drinks cold, lasts for years and no microplastics')),
    'points from the brief',
  );
  t.equal(vs?.kind === 'comparison' && vs.them, 'Plastic bottles');
  const unnamed = adStructure(
    job('us-vs-them-comparison', 'Better coffee: richer taste, fairer prices, faster delivery', { brandName: 'Bean Co' }),
  );
  t.same(unnamed?.kind === 'comparison' && [unnamed.us, unnamed.them], ['Bean Co', 'Them'], 'no named rival: the brand against "them"');
  t.equal(
    adStructure(job('us-vs-them-comparison', 'Why our oat milk is better than the rest')),
    null,
    'no points stated: no invented ones',
  );
  const given = adStructure(job('us-vs-them-comparison', 'Oat milk vs dairy', { copy: { subheadline: 'Creamier, greener, cheaper' } }));
  t.same(given?.kind === 'comparison' && given.points, ['Creamier', 'Greener', 'Cheaper'], "the customer's subheadline lists the points");
});

t.test('a feature grid: the features the prompt lists, at most four', async (t) => {
  const s = adStructure(
    job('feature-callout-grid', 'Four features of the Aero running shoe: light foam, grippy sole, breathable knit, recycled laces'),
  );
  t.same(s, { kind: 'features', items: ['Light foam', 'Grippy sole', 'Breathable knit', 'Recycled laces'] });
  const five = adStructure(job('feature-callout-grid', 'Our tent: light, waterproof, roomy, quick to pitch, recycled'));
  t.equal(five?.kind === 'features' && five.items.length, 4);
  t.equal(adStructure(job('feature-callout-grid', 'The best tent we ever made')), null, 'no features stated: no grid');
});

t.test('a before/after: the two states the prompt names', async (t) => {
  t.same(adStructure(job('before-after-split', 'Our stain remover takes a wine-stained white shirt back to spotless')), {
    kind: 'before-after',
    before: 'Wine-stained white shirt',
    after: 'Spotless',
  });
  t.same(adStructure(job('before-after-split', 'Our app turns messy receipts into tidy reports')), {
    kind: 'before-after',
    before: 'Messy receipts',
    after: 'Tidy reports',
  });
  t.equal(adStructure(job('before-after-split', 'Our new stain remover')), null);
});

t.test("a testimonial: a customer's complete sentence, attributed without an invented name", async (t) => {
  const s = adStructure(job('testimonial-quote', 'A customer loves how our standing desk fixed her back pain after two weeks'));
  t.same(s, {
    kind: 'quote',
    quote: 'I love how this standing desk fixed my back pain after two weeks.',
    attribution: 'Verified customer',
  });
  t.equal(quoteFrom('One user says the app saved him an hour a day'), 'The app saved me an hour a day.');
  t.equal(quoteFrom('Best espresso grinder I have owned'), 'Best espresso grinder I have owned.');
  const long = quoteFrom(
    'A reviewer says the backpack kept everything dry through three days of rain, even when we crossed the river twice and camped in the storm on the ridge',
  );
  t.equal(long, 'The backpack kept everything dry through three days of rain.', 'a long quote ends at a clause boundary, never mid-phrase');
  const given = adStructure(job('testimonial-quote', 'whatever', { copy: { headline: 'Changed my mornings.' }, brandName: 'Kettle' }));
  t.same(
    given,
    { kind: 'quote', quote: 'Changed my mornings.', attribution: 'Verified Kettle customer' },
    "the customer's headline verbatim",
  );
});

t.test('a sale: the offer number as its hero, and no badge without an offer', async (t) => {
  t.same(adStructure(job('bold-sale-banner', 'Summer sale on our linen shirts: 30% off everything until Sunday')), {
    kind: 'offer',
    hero: '-30%',
  });
  t.equal(offerHero('Only $19'), '$19');
  t.equal(offerHero('Free shipping'), 'FREE SHIPPING');
  t.equal(offerHero('Buy one, get one free'), null, 'a long offer is no hero');
  t.equal(adStructure(job('bold-sale-banner', 'Our linen shirts, woven in Portugal')), null, 'no offer, no hero');
  for (const slug of ['bold-sale-banner', 'seasonal-promo-poster', 'limited-time-offer-story'])
    t.equal(adCopy(job(slug, 'Our linen shirts, woven in Portugal')).badge, null, `${slug}: no SALE or NEW badge without an offer`);
  t.equal(
    adCopy(job('bold-sale-banner', 'Linen shirts', { copy: { offer: '25% off' } })).badge,
    '-25%',
    "the customer's offer makes the badge",
  );
});

t.test('an app: its name and what it does, from the prompt, else the brand', async (t) => {
  t.same(adStructure(job('app-install-banner', 'Download Pocket Budget, the app that tracks spending in one tap')), {
    kind: 'app',
    name: 'Pocket Budget',
    line: 'Tracks spending in one tap',
  });
  const branded = adStructure(job('app-install-banner', 'Budgeting made simple', { brandName: 'Pocket' }));
  t.equal(branded?.kind === 'app' && branded.name, 'Pocket');
  t.equal(adStructure(job('app-install-banner', 'Budgeting made simple')), null, 'no name: no invented app');
});
