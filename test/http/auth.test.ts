// Authentication, scopes and plan, over HTTP, on every operation of the contract.
import t from 'tap';
import { sql } from 'drizzle-orm';
import { operationIndex } from '../../src/operations/executor.ts';
import { startTestApp } from '../helpers/app.ts';
import { exampleRequest } from '../helpers/examples.ts';

const app = await startTestApp(t);
const db = app.service.ctx.db;

const authed = operationIndex.operations.filter((o) => o.scopes.length > 0);
const publicOps = operationIndex.operations.filter((o) => o.scopes.length === 0);

t.test('public operations need no key', async (t) => {
  t.same(publicOps.map((o) => o.operationId).sort(), [
    'getHealth',
    'getOpenApiDocument',
    'getReadiness',
    'getSkill',
    'getSkillPage',
    'listModels',
  ]);
  for (const op of publicOps) {
    // The health probes live at the server root (their own `servers` entry), the rest under /api/v1;
    // the agent instructions' area is one skill.md links (any other is 404).
    const res = await app.request(op.method, exampleRequest(op, { area: 'generations' }).path);
    t.equal(res.status, 200, `${op.operationId} without a key`);
  }
});

t.test('missing key → 401 unauthorized on every authenticated operation', async (t) => {
  for (const op of authed) {
    const req = exampleRequest(op);
    const res = await app.request(op.method, req.path, { body: req.body });
    t.equal(res.status, 401, op.operationId);
    t.equal(res.body.error.code, 'unauthorized', op.operationId);
    t.equal(res.body.error.retryable, false);
  }
});

t.test('malformed, unknown, expired and revoked keys → 401 invalid_api_key', async (t) => {
  const { key, keyId } = await app.workspace();
  const expired = await app.workspace();
  await db.execute(sql`update api_keys set expires_at = now() - interval '1 second' where id = ${expired.keyId}`);
  const revoked = await app.workspace();
  await db.execute(sql`update api_keys set revoked_at = now() where id = ${revoked.keyId}`);
  const cases: [string, Record<string, string>, RegExp][] = [
    ['not bearer', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, /Malformed Authorization/],
    ['bearer without token', { authorization: 'Bearer' }, /Malformed Authorization/],
    ['malformed key', { authorization: 'Bearer not-a-key' }, /Malformed API key/],
    ['truncated key', { authorization: `Bearer ${key.slice(0, -1)}` }, /Malformed API key/],
    ['unknown key', { authorization: `Bearer mapi_${'A'.repeat(43)}` }, /Unknown API key/],
    ['expired key', { authorization: `Bearer ${expired.key}` }, /expired/],
    ['revoked key', { authorization: `Bearer ${revoked.key}` }, /revoked/],
  ];
  for (const [name, headers, message] of cases) {
    const res = await app.request('GET', '/api/v1/assets', { headers });
    t.equal(res.status, 401, name);
    t.equal(res.body.error.code, 'invalid_api_key', name);
    t.match(res.body.error.message, message, name);
  }
  const ok = await app.request('GET', '/api/v1/assets', { key });
  t.equal(ok.status, 200, `the valid key ${keyId} works`);
});

t.test('read key on every write operation → 403 forbidden; read key works on every read operation', async (t) => {
  const reader = await app.workspace({ scopes: ['generations:read'] });
  for (const op of authed) {
    const req = exampleRequest(op);
    const res = await app.request(op.method, req.path, { key: reader.key, body: req.body });
    if (op.scopes.includes('generations:read')) {
      t.not(res.status, 403, `${op.operationId} accepts the read scope`);
      t.not(res.status, 401, op.operationId);
    } else {
      t.equal(res.status, 403, `${op.operationId} refuses a read-only key`);
      t.equal(res.body.error.code, 'forbidden');
      t.same(res.body.error.context.required_scopes, op.scopes);
    }
  }
});

t.test('write key grants every generations operation', async (t) => {
  const writer = await app.workspace({ scopes: ['generations:write'] });
  for (const op of authed) {
    const req = exampleRequest(op);
    const res = await app.request(op.method, req.path, { key: writer.key, body: req.body });
    t.not(res.status, 401, op.operationId);
    t.not(res.status, 403, op.operationId);
  }
});

t.test('a key with only social scopes is refused everywhere', async (t) => {
  const social = await app.workspace({ scopes: ['social:read', 'social:write'] });
  for (const op of authed) {
    const req = exampleRequest(op);
    const res = await app.request(op.method, req.path, { key: social.key, body: req.body });
    t.equal(res.status, 403, op.operationId);
  }
});

t.test('workspace without a paid plan → 402 payment_required on every authenticated operation', async (t) => {
  const unpaid = await app.workspace({ plan: 'none' });
  for (const op of authed) {
    const req = exampleRequest(op);
    const res = await app.request(op.method, req.path, { key: unpaid.key, body: req.body });
    t.equal(res.status, 402, op.operationId);
    t.equal(res.body.error.code, 'payment_required', op.operationId);
  }
});
