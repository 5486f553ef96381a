// The agent instructions, generated from the spec: skill.md, and when the whole contract does not
// fit one page of 40 KiB, skill.md as an index of at most 24 KiB (connecting, credits, polling,
// idempotency, prices, create → poll → download, errors and retries) linking one page per area,
// each at most 40 KiB and complete for its area: every operation and MCP tool once with its fields
// (nested ones too) and an example, every edit operation's shape. No description is ever cut: every
// meaning is given whole. (The pages are fetched over HTTP by test/http/catalog.test.ts.)
import fs from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { buildIndex, type JsonObject } from '../../scripts/lib/codegen.ts';
import { renderSkillPages, SKILL_INDEX_MAX_BYTES, SKILL_MAX_BYTES, skillPageFile } from '../../scripts/lib/skill.ts';

const root = new URL('../..', import.meta.url);
const generated = (file: string) => fs.readFileSync(new URL(`generated/${file}`, root), 'utf8');
const spec = parse(fs.readFileSync(new URL('spec/openapi.yaml', root), 'utf8')) as JsonObject;
const index = buildIndex(spec);
const tools = (JSON.parse(generated('mcp-tools.json')) as { tools: { name: string }[] }).tools;
const schemas = (spec.components as { schemas: Record<string, JsonObject> }).schemas;
const count = (text: string, needle: string) => text.split(needle).length - 1;
const oneLine = (s: unknown) =>
  String(s ?? '')
    .replace(/\s+/g, ' ')
    .trim();

/** The areas skill.md links (`[…](skill/<area>.md)`), in its order. */
const linkedAreas = (text: string) => [...new Set([...text.matchAll(/\]\(skill\/([a-z0-9-]+)\.md\)/g)].map((m) => m[1]))];

const skill = generated('skill.md');
const areas = linkedAreas(skill);
/** Every page by its name: `skill.md`, then `skill/<area>.md` as linked. */
const pages = new Map<string, string>([['skill.md', skill], ...areas.map((a) => [`skill/${a}.md`, generated(skillPageFile(a))] as const)]);
const areaPages = [...pages].filter(([name]) => name !== 'skill.md');

/** The lines of the section under a heading that contains `needle`, up to the next heading. */
function section(text: string, needle: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith('#') && l.includes(needle));
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && l.startsWith('#'));
  return lines.slice(start, end < 0 ? undefined : end);
}

/** The page holding an operation's or tool's section (its heading names it), and that section. */
function home(heading: string): { page: string; lines: string[] } {
  for (const [page, text] of pages) {
    const lines = section(text, heading);
    if (lines.length && lines[0].startsWith('### ') && !lines[0].includes('](')) return { page, lines };
  }
  return { page: '', lines: [] };
}

t.test('the contract needs more than one page: skill.md is an index linking the area pages', async (t) => {
  t.ok(areas.length >= 6, `skill.md links ${areas.length} area pages`);
  const files = fs.readdirSync(new URL('generated/', root)).filter((f) => /^skill-.*\.md$/.test(f));
  t.same(files.sort(), areas.map(skillPageFile).sort(), 'every generated page is linked, every link generated');
  for (const [name, text] of areaPages) t.match(text, '[index](../skill.md)', `${name} links back to the index`);
});

t.test('every page within its budget', async (t) => {
  t.equal(SKILL_MAX_BYTES, 40 * 1024);
  t.equal(SKILL_INDEX_MAX_BYTES, 24 * 1024);
  const bytes = Buffer.byteLength(skill);
  t.ok(bytes <= SKILL_INDEX_MAX_BYTES, `the index skill.md is ${bytes} bytes, at most ${SKILL_INDEX_MAX_BYTES}`);
  for (const [name, text] of areaPages) {
    const b = Buffer.byteLength(text);
    t.ok(b <= SKILL_MAX_BYTES, `${name} is ${b} bytes, at most ${SKILL_MAX_BYTES}`);
  }
});

t.test('the index says the main flows: connecting, credits, polling, idempotency, create → poll → download, errors', async (t) => {
  for (const topic of [
    '## Connect',
    '**Credits.**',
    '**Polling.**',
    '**Idempotency.**',
    '## Create → poll → download',
    '## Errors and retries',
  ])
    t.equal(count(skill, topic), 1, topic);
  const flow = section(skill, 'Create → poll → download').join('\n');
  for (const op of index.operations.filter((o) => o.params.some((p) => p.name === 'idempotency-key')))
    t.match(flow, `\`${op.method} ${op.path}\``, `${op.operationId} is a paid flow`);
  t.match(
    flow,
    /- `create_generation`, `POST \/generations` → `get_generation`, `GET \/generations\/\{id\}`: \[generations\]\(skill\/generations\.md\)/,
  );
  t.match(flow, /signed URLs/);
});

t.test('every operation once, on the page the index lists it under, with an example; every MCP tool on one page', async (t) => {
  for (const op of index.operations) {
    const heading = ` · \`${op.operationId}\` · `;
    t.equal(
      areaPages.reduce((n, [, text]) => n + count(text, heading), 0),
      1,
      `${op.operationId} has one section`,
    );
    const { page, lines } = home(`\`${op.operationId}\``);
    t.match(lines[0], `${op.method} ${op.server && op.server !== '/' ? op.server : ''}${op.path}`);
    const listed = section(skill, `](${page})`).join('\n');
    t.match(listed, `\`${op.method} ${op.path}\` \`${op.operationId}\``, `${op.operationId} listed under ${page} in the index`);
    if (!op.aliasOf)
      t.ok(
        lines.some((l) => l.startsWith('Example: `')),
        `${op.operationId}: an example request`,
      );
    if (!op.aliasOf)
      for (const p of op.params.filter((x) => x.in !== 'header'))
        t.ok(
          lines.some((l) => l.startsWith(`- \`${p.name}\` (${p.in})`)),
          `${op.operationId}: parameter ${p.name}`,
        );
  }
  const everything = [...pages.values()].join('\n');
  for (const tool of tools) t.match(everything, `\`${tool.name}\``, `tool ${tool.name} is named`);
  for (const tool of index.mcpOnlyTools) {
    const { page, lines } = home(`\`${tool.operationId}\``);
    t.ok(
      lines.some((l) => l.startsWith(`Example: \`{"name":"${tool.operationId}"`)),
      `${tool.operationId}: an example call`,
    );
    t.match(section(skill, `](${page})`).join('\n'), `MCP-only tool \`${tool.operationId}\``, `${tool.operationId} listed under ${page}`);
  }
});

/** Every `description` in the spec, as one line. */
function specDescriptions(): Set<string> {
  const out = new Set<string>();
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object')
      for (const [k, v] of Object.entries(node)) {
        if (k === 'description' && typeof v === 'string') out.add(oneLine(v));
        walk(v);
      }
  };
  walk(spec);
  return out;
}

t.test('no description is cut: every meaning on every page is a whole description of the spec', async (t) => {
  const whole = specDescriptions();
  // Phrases of the generator itself, not descriptions.
  const own = /^(same fields as `[^`]+`\.|see Idempotency\.)$/;
  let checked = 0;
  for (const [name, text] of pages) {
    for (const line of text.split('\n')) {
      // A field or union shape: `- \`name\` type limits * — meaning`.
      const m = /^\s*- (?:`[^`]+`|shape)[^—]*? — (.+)$/.exec(line);
      if (!m) continue;
      checked++;
      t.ok(whole.has(m[1]) || own.test(m[1]), `${name}: whole meaning in ${JSON.stringify(line.slice(0, 120))}`);
    }
  }
  t.ok(checked > 150, `${checked} meanings checked`);
  for (const op of index.operations) {
    const { lines } = home(`\`${op.operationId}\``);
    const body = lines.join('\n');
    if (op.description && !op.aliasOf) t.ok(body.includes(oneLine(op.description)), `${op.operationId}: the whole description`);
    for (const tool of op.mcpTools.filter(() => op.mcpTools.length > 1))
      t.ok(body.includes(`- \`${tool.name}\`: ${oneLine(tool.description)}`), `${tool.name}: the whole description`);
    for (const [status, r] of Object.entries(op.responses).filter(([s]) => s.startsWith('2')))
      if (r.description && !op.aliasOf)
        t.ok(body.includes(`${status} (${oneLine(r.description)})`), `${op.operationId}: what ${status} returns, whole`);
  }
  for (const tool of index.mcpOnlyTools)
    t.ok(
      home(`\`${tool.operationId}\``).lines.join('\n').includes(oneLine(tool.description)),
      `${tool.operationId}: the whole description`,
    );
  const connect = section(skill, 'Connect').join('\n');
  for (const s of Object.values((spec.components as { securitySchemes: Record<string, JsonObject> }).securitySchemes))
    t.ok(connect.includes(oneLine(s.description)), 'the security scheme described whole');
});

t.test('fields one line each, nested objects too, on the page of their operation', async (t) => {
  const gen = home('`createGeneration`');
  t.equal(gen.page, 'skill/generations.md');
  t.ok(
    gen.lines.some((l) => /^- `prompt` string ≤8000 — /.test(l)),
    'name, type, bound, meaning',
  );
  t.ok(
    gen.lines.some((l) => /^- `type` `static_ad\|video_ad\|ugc_ad\|ai_model` \*/.test(l)),
    'enum and required',
  );
  const upload = home('`uploadEditorMedia`').lines;
  const at = (name: string) => upload.findIndex((l) => l.startsWith(`- \`${name}\``));
  t.ok(at('media') >= 0 && upload[at('media') + 1].startsWith('  - `'), 'media has its fields under it');
  t.ok(
    upload.some((l) => l.startsWith('  - `data` string')),
    'media.data',
  );
  t.ok(at('placement') >= 0 && upload.some((l) => l.startsWith('  - `fit` ')), 'placement.fit');
  t.ok(
    upload.some((l) => l.startsWith('- `file` binary')),
    'the multipart file part',
  );
  const refs = home('`createReferenceInspiration`').lines;
  t.ok(
    refs.some((l) => /^- `images` object\[\]/.test(l)),
    'images[] as objects',
  );
  t.ok(refs.findIndex((l) => l.startsWith('- `images`')) < refs.findIndex((l) => l.startsWith('  - `data`')), 'with its fields under it');
});

t.test('every field has its meaning on the page of its operation (nested fields too)', async (t) => {
  // The first time a page names a field it gives the field's whole meaning.
  for (const [op, field, path] of [
    ['createGeneration', 'prompt', ['CreateGenerationRequest', 'prompt']],
    ['uploadEditorMedia', 'data', null],
    ['createFacelessVideo', 'voice_id', ['CreateFacelessVideoRequest', 'voice_id']],
  ] as const) {
    const { page, lines } = home(`\`${op}\``);
    const line = lines.find((l) => new RegExp(`^\\s*- \`${field}\` `).test(l));
    t.ok(line?.includes(' — '), `${op}.${field} has its meaning on ${page}`);
    if (path) {
      const schema = schemas[path[0]] as { properties: Record<string, { description?: string }> };
      t.ok(line?.endsWith(oneLine(schema.properties[path[1]].description)), `${op}.${field}: the whole description`);
    }
  }
});

t.test('every edit operation with its fields', async (t) => {
  const edits = home('`applyEditorEdits`');
  t.equal(edits.page, 'skill/editor.md');
  const branches = (schemas.EditorOperation.oneOf as { $ref: string }[]).map((b) => schemas[b.$ref.split('/').pop()!]);
  t.equal(branches.length, 19);
  for (const b of branches) {
    const props = b.properties as Record<string, { const?: string }>;
    const name = props.type.const!;
    const start = edits.lines.findIndex((l) => l.startsWith(`  - \`${name}\``));
    t.ok(start >= 0, `${name} is listed`);
    const end = edits.lines.findIndex((l, i) => i > start && /^ {0,2}- /.test(l));
    const block = edits.lines.slice(start + 1, end < 0 ? undefined : end);
    for (const field of Object.keys(props).filter((k) => k !== 'type')) {
      t.ok(
        block.some((l) => l.startsWith(`    - \`${field}\``)),
        `${name}.${field}`,
      );
    }
  }
});

t.test('connecting: REST and /mcp, with OAuth discovery or an API key as bearer', async (t) => {
  const connect = section(skill, 'Connect').join('\n');
  t.match(connect, 'POST <origin>/mcp');
  t.match(connect, 'Authorization: Bearer');
  t.match(connect, '/.well-known/oauth-protected-resource');
  t.match(connect, '/oauth/authorize');
  t.match(connect, /API key as bearer/);
  t.match(connect, /OAuth 2\.1/);
});

t.test('prices from the catalog', async (t) => {
  const catalog = parse(fs.readFileSync(new URL('spec/catalog.yaml', root), 'utf8')) as { static_ads: { slug: string; credits: number }[] };
  const prices = section(skill, 'Prices').join('\n');
  const first = catalog.static_ads[0];
  t.match(prices, `${first.slug} ${first.credits}`);
  t.match(prices, /faceless video, by voice/);
});

t.test('the error codes and retry rules once, in the index, not per operation', async (t) => {
  const everything = [...pages.values()].join('\n');
  t.equal(count(everything, '## Errors'), 1);
  t.equal(count(everything, '{"error": {"code", "message", "retryable", "context"}}'), 1, 'the envelope once');
  t.equal(count(everything, 'invalid_api_key are 401'), 1, 'the code list once');
  t.equal(count(everything, 'On 429 wait `Retry-After` seconds'), 1, 'the retry rules once');
  const errors = section(skill, 'Errors').join('\n');
  for (const c of ['retryable', 'Retry-After', 'idempotency_conflict', 'rate_limited']) t.match(errors, c);
});

t.test('a longer contract: more is said on the same pages, each still within its budget, nothing cut', async (t) => {
  const longer = structuredClone(spec) as { paths: Record<string, Record<string, { description: string }>> };
  const more = 'More detail. '.repeat(20).trim();
  for (const item of Object.values(longer.paths))
    for (const op of Object.values(item))
      if (op && typeof op === 'object' && 'description' in op) op.description = `${op.description} ${more}`;
  const files = renderSkillPages(longer as unknown as JsonObject, buildIndex(longer as unknown as JsonObject));
  t.ok(Buffer.byteLength(files['skill.md']) <= SKILL_INDEX_MAX_BYTES);
  t.same(Object.keys(files).sort(), ['skill.md', ...areas.map(skillPageFile)].sort(), 'the same pages');
  for (const [name, text] of Object.entries(files)) t.ok(Buffer.byteLength(text) <= SKILL_MAX_BYTES, `${name} within its budget`);
  const all = Object.values(files).join('\n');
  for (const op of buildIndex(longer as unknown as JsonObject).operations.filter((o) => !o.aliasOf))
    t.ok(all.includes(oneLine(op.description)), `${op.operationId}: its longer description whole`);
});

t.test('a page that cannot hold its area fails the generation, naming it', async (t) => {
  const longer = structuredClone(spec) as { paths: Record<string, Record<string, { description: string }>> };
  longer.paths['/editor/videos'].post.description += ` ${'Much more detail. '.repeat(1200)}`;
  t.throws(
    () => renderSkillPages(longer as unknown as JsonObject, buildIndex(longer as unknown as JsonObject)),
    /skill page editor is \d+ bytes/,
  );
});

t.test('a contract that fits one page is one page, which says it is enough alone', async (t) => {
  const small = structuredClone(spec) as JsonObject & { paths: Record<string, unknown> };
  small.paths = Object.fromEntries(
    Object.entries(small.paths).filter(([p]) => ['/models', '/openapi.json', '/skill.md', '/generations'].includes(p)),
  );
  small['x-mcp-only-tools'] = [];
  const smallIndex = buildIndex(small);
  const files = renderSkillPages(small, smallIndex);
  t.same(Object.keys(files), ['skill.md']);
  t.match(files['skill.md'], 'this page alone is enough to use the API');
  for (const op of smallIndex.operations) t.equal(count(files['skill.md'], ` · \`${op.operationId}\` · `), 1, op.operationId);
  t.ok(Buffer.byteLength(files['skill.md']) <= SKILL_MAX_BYTES);
});
