// Tool metadata over the real /mcp endpoint: every listed tool has its declared annotations, a
// title and an output schema; the server has an icon served from its own origin (a data: URI);
// real results carry structuredContent that validates against the tool's output schema; and a
// finished generation's media come back as resource_link content items beside the JSON.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ResourceLink, Tool } from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import { TOOLS_BY_NAME } from '../../src/mcp/tools.ts';
import { connect, startMcpApp } from './helpers.ts';

const app = await startMcpApp(t, { RATE_LIMIT_GENERATIONS: '1000' }, { workers: true });
const ws = await app.workspace({ credits: 500, scopes: ['generations:read', 'generations:write'] });
const client = await connect(app, ws.key);
t.teardown(() => client.close());
const { tools } = await client.listTools();
const byName = new Map(tools.map((x) => [x.name, x]));
const ajv = new Ajv2020({ strict: false });
const validators = new Map<string, ReturnType<typeof ajv.compile>>();
const validatorOf = (tool: Tool) => {
  let v = validators.get(tool.name);
  if (!v) validators.set(tool.name, (v = ajv.compile(tool.outputSchema!)));
  return v;
};

/** A tool call whose structuredContent is checked against the listed output schema. */
async function call(t: Test, name: string, args: Record<string, unknown> = {}) {
  const res = await client.callTool({ name, arguments: args });
  t.ok(res.structuredContent && typeof res.structuredContent === 'object', `${name}: structuredContent`);
  const validate = validatorOf(byName.get(name)!);
  t.ok(validate(res.structuredContent), `${name}: structuredContent validates against outputSchema ${JSON.stringify(validate.errors)}`);
  return res;
}

t.test('every tool: a title, the four declared annotations and an output schema', async (t) => {
  t.ok(tools.length >= 37, `${tools.length} tools`);
  for (const tool of tools) {
    t.ok(tool.title && tool.title.length > 3, `${tool.name}: title`);
    t.same(
      Object.keys(tool.annotations ?? {}).sort(),
      ['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint'],
      `${tool.name}: the four hints`,
    );
    for (const v of Object.values(tool.annotations ?? {})) t.type(v, 'boolean');
    t.same(tool.annotations, TOOLS_BY_NAME.get(tool.name)!.annotations, `${tool.name}: as the spec declares`);
    t.equal(tool.outputSchema?.type, 'object', `${tool.name}: outputSchema`);
    t.doesNotThrow(() => validatorOf(tool), `${tool.name}: outputSchema compiles`);
    t.ok(
      validatorOf(tool)({ error: { code: 'x', message: 'y', retryable: false, context: {} } }),
      `${tool.name}: an error envelope passes`,
    );
  }
  t.match(byName.get('suggest_reference_template_targets')!.annotations, { readOnlyHint: true, openWorldHint: true });
  t.match(byName.get('delete_webhook_endpoint')!.annotations, { destructiveHint: true, idempotentHint: true, openWorldHint: false });
  t.match(byName.get('list_webhook_endpoints')!.outputSchema, { properties: { object: { const: 'list' } } });
});

t.test('the server icon: an SVG data: URI (our own origin), with its type and sizes', async (t) => {
  const info = client.getServerVersion() as { name: string; icons?: { src: string; mimeType?: string; sizes?: string[] }[] };
  t.equal(info.name, 'media-api');
  t.equal(info.icons?.length, 1);
  const icon = info.icons![0];
  t.equal(icon.mimeType, 'image/svg+xml');
  t.same(icon.sizes, ['any']);
  const m = /^data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)$/.exec(icon.src);
  t.ok(m, 'a base64 data: URI');
  const svg = Buffer.from(m![1], 'base64').toString('utf8');
  t.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>\s*$/s);
  t.notMatch(svg, /<script|on\w+=|href|url\(/i, 'no script, handler or outside reference');
  t.equal(svg.match(/https?:\/\//g)?.length, 1, 'the only URL is the SVG namespace');
});

t.test('structuredContent validates against outputSchema for real calls, errors included', async (t) => {
  await call(t, 'get_workspace');
  await call(t, 'list_generation_catalog');
  await call(t, 'list_workspace_assets');
  await call(t, 'list_webhook_endpoints');
  await call(t, 'list_editor_sound_effects', { limit: 2 });
  const created = await call(t, 'create_editor_video', { title: 'Metadata' });
  const id = (created.structuredContent as { id: number }).id;
  await call(t, 'get_editor_video', { id });
  await call(t, 'list_editor_videos', { limit: 1 });
  await call(t, 'get_video', { id });
  await call(t, 'apply_editor_edits', { id, operations: [{ type: 'set_title', title: 'Renamed' }] });
  const missing = await call(t, 'get_generation', { id: '00000000-0000-4000-8000-000000000000' });
  t.equal(missing.isError, true);
  t.match(missing.structuredContent, { error: { code: 'not_found' } });
  t.same(
    (missing.content as { type: string }[]).map((c) => c.type),
    ['text'],
    'an error has no resource links',
  );
});

t.test(
  'a finished generation: its output as a resource_link (signed URL, name, MIME type) beside text and structuredContent',
  async (t) => {
    const created = await call(t, 'create_generation', {
      type: 'static_ad',
      template_slug: 'bold-sale-banner',
      prompt: 'Resource links',
      idempotency_key: 'metadata-links-1',
    });
    t.notOk(created.isError, JSON.stringify(created.structuredContent));
    t.same(
      (created.content as { type: string }[]).map((c) => c.type),
      ['text'],
      'a queued batch has no media yet',
    );
    const genId = (created.structuredContent as { generations: { id: string }[] }).generations[0].id;
    let res = await call(t, 'get_generation', { id: genId });
    const end = Date.now() + 120_000;
    while ((res.structuredContent as { status: string }).status === 'generating' && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      res = await call(t, 'get_generation', { id: genId });
    }
    const gen = res.structuredContent as { status: string; url: string; output: { content_type: string } };
    t.equal(gen.status, 'completed', JSON.stringify(res.structuredContent));
    const content = res.content as ({ type: 'text'; text: string } | ResourceLink)[];
    t.equal(content[0].type, 'text', 'the summary text first');
    const links = content.filter((c): c is ResourceLink => c.type === 'resource_link');
    t.equal(links.length, 1, 'one output, one link');
    t.same(links[0], { type: 'resource_link', uri: gen.url, name: `generation ${genId} url`, mimeType: gen.output.content_type });
    t.match(links[0].mimeType, /^image\//);
    const media = await fetch(links[0].uri);
    t.equal(media.status, 200, 'the link is the signed media URL');
    t.equal(media.headers.get('content-type'), links[0].mimeType, 'served with the MIME type the link gives');
    await media.arrayBuffer();
  },
);

t.test('media links of other results: slides, exports, uploads, video', async (t) => {
  const expect = {
    get_slideshow: ['slides[].image_url', 'video_url'],
    get_video: ['url'],
    export_editor_video: ['url'],
    get_editor_video_export: ['url'],
    upload_editor_media: ['media.url'],
    upload_editor_media_from_url: ['media.url'],
    list_editor_media: ['data[].url'],
  };
  for (const [name, paths] of Object.entries(expect))
    t.same(
      TOOLS_BY_NAME.get(name)!.media.map((m) => m.path),
      paths,
      `${name}: media fields from the spec`,
    );
  // An upload: its stored file as a link with the detected type.
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
  const up = await call(t, 'upload_editor_media', {
    media_type: 'image',
    media: { data: png.toString('base64'), filename: 'dot.png' },
  });
  t.notOk(up.isError, JSON.stringify(up.structuredContent));
  const media = (up.structuredContent as { media: { id: string; url: string; content_type: string } }).media;
  const links = (up.content as ResourceLink[]).filter((c) => c.type === 'resource_link');
  t.same(links, [{ type: 'resource_link', uri: media.url, name: `editor_media ${media.id} media.url`, mimeType: 'image/png' }]);
});
