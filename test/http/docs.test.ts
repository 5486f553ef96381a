// GET /docs: the API reference page, in headless Chromium (test/helpers/browser.ts). The page
// renders the served /api/v1/openapi.json: its operations are listed, and an operation opened
// shows its request example. Every request the browser makes is recorded: all of them go to this
// server (no CDN, no web fonts, no telemetry), and the page's Content-Security-Policy reports no
// violation (Scalar runs without 'unsafe-eval' and without inline scripts other than its hashed one).
import t from 'tap';
import { launchBrowser } from '../helpers/browser.ts';
import { startTestApp } from '../helpers/app.ts';

const app = await startTestApp(t);
const origin = new URL(app.url).origin;

t.test('GET /docs answers the page with a strict policy; its script is served from here', async (t) => {
  const bare = await fetch(`${app.url}/docs`, { redirect: 'manual' });
  t.equal(bare.status, 301, '/docs redirects to /docs/ (the page loads its script relative to it)');
  t.equal(bare.headers.get('location'), '/docs/');
  await bare.text();

  const res = await fetch(`${app.url}/docs/`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/html/);
  const html = await res.text();
  const csp = res.headers.get('content-security-policy') ?? '';
  t.match(csp, /default-src 'none'/);
  t.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'(;|$)/, 'scripts: this server and one hashed inline script');
  t.notMatch(csp, /unsafe-eval/);
  t.notMatch(/script-src[^;]*/.exec(csp)?.[0] ?? '', /unsafe-inline/);
  t.match(csp, /frame-ancestors 'none'/);
  // Every URL in the page is relative to this server.
  const urls = [...html.matchAll(/\b(?:src|href)=["']([^"']+)["']/g)].map((m) => m[1]);
  t.ok(urls.length >= 1, `the page names its script (${urls.join(', ')})`);
  for (const u of urls) t.equal(new URL(u, `${app.url}/docs/`).origin, origin, `${u} is on this server`);
  t.notMatch(html, /jsdelivr|unpkg|fonts\.scalar\.com|googleapis/);
  t.match(html, /\/api\/v1\/openapi\.json/, 'the page reads the served document');

  const js = await fetch(`${app.url}/docs/js/scalar.js`);
  t.equal(js.status, 200);
  t.match(js.headers.get('content-type'), /javascript/);
  t.ok((await js.arrayBuffer()).byteLength > 100_000, 'the bundled Scalar script');

  // The route index knows the page: a wrong method is 405 with Allow, in the envelope.
  const post = await app.request('POST', '/docs/', { unchecked: true });
  t.equal(post.status, 405);
  t.equal(post.body.error.code, 'method_not_allowed');
  t.equal(post.headers.get('allow'), 'GET, HEAD');
});

t.test('in a browser: operations listed, an operation shows its request example, nothing loaded from elsewhere', async (t) => {
  const browser = await launchBrowser(t);
  const requested: string[] = [];
  const problems: string[] = [];
  browser.on('request', (r) => requested.push(r.url()));
  const page = await browser.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

  await page.goto(`${app.url}/docs`, { waitUntil: 'load' });
  t.equal(new URL(page.url()).pathname, '/docs/');
  // The sidebar lists the operations by their summaries.
  await page.getByText('Queue generations').first().waitFor({ timeout: 60_000 });
  const text = String(await page.evaluate('document.body.innerText'));
  for (const summary of ['Queue generations', 'Liveness probe', 'Readiness probe']) t.match(text, summary, `lists "${summary}"`);

  // Opening the operation shows its request example: the spec's example body, sent to the
  // served (absolute) server URL.
  await page.getByText('Queue generations').first().click();
  const section = page.locator('section[id$="tag/generations/POST/generations"]');
  await section.getByText('product-spotlight').first().waitFor({ timeout: 30_000 });
  const example = await section.innerText();
  t.match(new URL(page.url()).hash, /POST\/generations$/, 'the address names the operation');
  t.match(example, /"template_slug": "product-spotlight"/, 'the request example carries the spec example body');
  t.match(example, /curl/, 'as a curl command');
  t.match(example, new RegExp(`${app.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/api/v1/generations`), 'to the absolute server URL');

  t.ok(requested.length > 2, `the browser made ${requested.length} requests`);
  const elsewhere = requested.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin);
  t.same(elsewhere, [], 'every request went to this server');
  t.same(problems, [], 'no console error and no policy violation');
});
