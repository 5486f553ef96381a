// skill.md, generated from the spec, is enough for an agent to work from alone, in at most 40 KiB:
// every operation and every MCP tool once with its fields (nested ones too) and an example, every
// edit operation's shape, how to connect to /mcp (OAuth or an API key), the prices, and the error
// codes and retry rules once.
import fs from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { buildIndex, type JsonObject } from '../../scripts/lib/codegen.ts';
import { renderSkill, SKILL_MAX_BYTES } from '../../scripts/lib/skill.ts';

const root = new URL('../..', import.meta.url);
const skill = fs.readFileSync(new URL('generated/skill.md', root), 'utf8');
const spec = parse(fs.readFileSync(new URL('spec/openapi.yaml', root), 'utf8')) as JsonObject;
const index = buildIndex(spec);
const tools = (JSON.parse(fs.readFileSync(new URL('generated/mcp-tools.json', root), 'utf8')) as { tools: { name: string }[] }).tools;
const schemas = (spec.components as { schemas: Record<string, JsonObject> }).schemas;
const count = (text: string, needle: string) => text.split(needle).length - 1;

/** The lines of the section under a heading that contains `needle`, up to the next heading. */
function section(needle: string): string[] {
  const lines = skill.split('\n');
  const start = lines.findIndex((l) => l.startsWith('#') && l.includes(needle));
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && l.startsWith('#'));
  return lines.slice(start, end < 0 ? undefined : end);
}

t.test('at most 40 KiB', async (t) => {
  const bytes = Buffer.byteLength(skill);
  t.equal(SKILL_MAX_BYTES, 40 * 1024);
  t.ok(bytes <= SKILL_MAX_BYTES, `skill.md is ${bytes} bytes`);
  t.comment(`skill.md: ${bytes} bytes`);
});

t.test('every operation once, with an example; every MCP tool named', async (t) => {
  for (const op of index.operations) {
    t.equal(count(skill, ` · \`${op.operationId}\` · `), 1, `${op.operationId} has one section`);
    t.match(skill, `${op.method} ${op.server && op.server !== '/' ? op.server : ''}${op.path}`);
    const lines = section(`\`${op.operationId}\``);
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
  for (const tool of tools) t.match(skill, `\`${tool.name}\``, `tool ${tool.name} is named`);
  for (const tool of index.mcpOnlyTools) {
    const lines = section(`\`${tool.operationId}\``);
    t.ok(
      lines.some((l) => l.startsWith(`Example: \`{"name":"${tool.operationId}"`)),
      `${tool.operationId}: an example call`,
    );
  }
});

t.test('fields one line each, nested objects too', async (t) => {
  const gen = section('`createGeneration`');
  t.ok(
    gen.some((l) => /^- `prompt` string ≤8000 — /.test(l)),
    'name, type, bound, meaning',
  );
  t.ok(
    gen.some((l) => /^- `type` `static_ad\|video_ad\|ugc_ad\|ai_model` \*/.test(l)),
    'enum and required',
  );
  const upload = section('`uploadEditorMedia`');
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
  const refs = section('`createReferenceInspiration`');
  t.ok(
    refs.some((l) => /^- `images` object\[\]/.test(l)),
    'images[] as objects',
  );
  t.ok(refs.findIndex((l) => l.startsWith('- `images`')) < refs.findIndex((l) => l.startsWith('  - `data`')), 'with its fields under it');
});

t.test('every edit operation with its fields', async (t) => {
  const edits = section('`applyEditorEdits`');
  const branches = (schemas.EditorOperation.oneOf as { $ref: string }[]).map((b) => schemas[b.$ref.split('/').pop()!]);
  t.equal(branches.length, 19);
  for (const b of branches) {
    const props = b.properties as Record<string, { const?: string }>;
    const name = props.type.const!;
    const start = edits.findIndex((l) => l.startsWith(`  - \`${name}\``));
    t.ok(start >= 0, `${name} is listed`);
    const end = edits.findIndex((l, i) => i > start && /^ {0,2}- /.test(l));
    const block = edits.slice(start + 1, end < 0 ? undefined : end);
    for (const field of Object.keys(props).filter((k) => k !== 'type')) {
      t.ok(
        block.some((l) => l.startsWith(`    - \`${field}\``)),
        `${name}.${field}`,
      );
    }
  }
});

t.test('connecting: REST and /mcp, with OAuth discovery or an API key as bearer', async (t) => {
  const connect = section('Connect').join('\n');
  t.match(connect, 'POST <origin>/mcp');
  t.match(connect, 'Authorization: Bearer');
  t.match(connect, '/.well-known/oauth-protected-resource');
  t.match(connect, '/oauth/authorize');
  t.match(connect, /API key as bearer/);
  t.match(connect, /OAuth 2\.1/);
});

t.test('prices from the catalog', async (t) => {
  const catalog = parse(fs.readFileSync(new URL('spec/catalog.yaml', root), 'utf8')) as { static_ads: { slug: string; credits: number }[] };
  const prices = section('Prices').join('\n');
  const first = catalog.static_ads[0];
  t.match(prices, `${first.slug} ${first.credits}`);
  t.match(prices, /faceless video, by voice/);
});

t.test('the error codes and retry rules once, not per operation', async (t) => {
  t.equal(count(skill, '## Errors'), 1);
  t.equal(count(skill, '{"error": {"code", "message", "retryable", "context"}}'), 1, 'the envelope once');
  t.equal(count(skill, 'invalid_api_key are 401'), 1, 'the code list once');
  t.equal(
    count(skill, 'Retry-After'),
    count(section('Errors').join('\n'), 'Retry-After') + count(section('Connect').join('\n'), 'Retry-After'),
    'retry rules only in the general sections',
  );
  const errors = section('Errors').join('\n');
  for (const c of ['retryable', 'Retry-After', 'idempotency_conflict', 'rate_limited']) t.match(errors, c);
});

t.test('a longer contract is said more briefly, never over the limit', async (t) => {
  const longer = structuredClone(spec) as { paths: Record<string, Record<string, { description: string }>> };
  for (const item of Object.values(longer.paths))
    for (const op of Object.values(item))
      if (op && typeof op === 'object' && 'description' in op) op.description = `${op.description} ${'More detail. '.repeat(50)}`;
  const text = renderSkill(longer as unknown as JsonObject, buildIndex(longer as unknown as JsonObject));
  t.ok(Buffer.byteLength(text) <= SKILL_MAX_BYTES);
  t.equal(count(text, '## Operations'), 1);
});
