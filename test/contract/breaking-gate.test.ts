// The breaking-change gate (scripts/contract-diff.ts, npm run contract:diff): the contract passes
// it against the released 1.0.0; each kind of break applied to the released contract is caught
// with a message naming the operation and the place; additive changes pass; a raised major
// version allows a break.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { contractDiff, formatResult, type GateResult } from '../../scripts/lib/contract-diff.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const releasedFile = path.join(root, 'spec/released/openapi-1.0.0.json');
const released = JSON.parse(fs.readFileSync(releasedFile, 'utf8'));

// The cases below edit the released contract and compare it with itself. The diff looks at each
// operation with every schema it reaches, so comparing all of them for every case was most of this
// file's time; the cases compare the operations they are about (all of the released contract's
// components kept), and the whole contract goes through the gate in the first and last tests.
const CASE_PATHS = ['/assets', '/generations', '/generations/{id}', '/editor/videos', '/editor/media', '/slideshows'];
const base = { ...released, paths: Object.fromEntries(CASE_PATHS.map((p) => [p, released.paths[p]])) };

/** The released contract (its case operations) with `edit` applied. */
function edited(edit: (spec: any) => void, from: any = base): any {
  const spec = structuredClone(from);
  edit(spec);
  return spec;
}

/** The gate's result for `after` against `before`, with its message for the test's diagnostics. */
function gate(after: any, before: any = base): GateResult & { message: string } {
  const r = contractDiff(before, after);
  return { ...r, message: formatResult(r) };
}

t.test('the released contract is 1.0.0 and the contract passes the gate (npm run contract:diff)', async (t) => {
  t.equal(released.info.version, '1.0.0');
  t.equal(released.openapi, '3.1.0');
  const r = await run(process.execPath, ['scripts/contract-diff.ts'], { cwd: root }).catch((e) => e);
  t.equal(r.code ?? 0, 0, `contract:diff output:\n${r.stdout}\n${r.stderr}`);
  t.match(r.stdout, /against released 1\.0\.0: 0 breaking/);
});

t.test('each kind of break is caught, naming the operation and the place', async (t) => {
  const breaks: [string, (s: any) => void, { operation: string; path: RegExp; description?: RegExp }][] = [
    [
      'a removed operation',
      (s) => delete s.paths['/assets'].get,
      { operation: 'GET /assets', path: /^paths\.\/assets\.get$/, description: /Removed\] operation GET \/assets/ },
    ],
    [
      'a removed response field',
      (s) => {
        const g = s.components.schemas.Generation;
        delete g.properties.progress;
        g.required = g.required.filter((f: string) => f !== 'progress');
      },
      {
        operation: 'GET /generations/{id}',
        path: /responses\.200\.content\.application\/json\.schema\.properties\.progress$/,
        description: /Removed\] property `progress` in Response 200/,
      },
    ],
    [
      'a removed request field (the schema is closed: clients still sending it get 400)',
      (s) => delete s.components.schemas.CreateEditorVideoRequest.properties.fps,
      {
        operation: 'POST /editor/videos',
        path: /requestBody\.content\.application\/json\.schema\.properties\.fps$/,
        description: /Removed\] property `fps`/,
      },
    ],
    [
      'a removed query parameter',
      (s) => s.paths['/editor/media'].get.parameters.splice(1, 1),
      { operation: 'GET /editor/media', path: /parameters\.1$/, description: /Removed\] query parameter `query`/ },
    ],
    [
      'a changed success status (200 becomes 201)',
      (s) => {
        const r = s.paths['/assets'].get.responses;
        r['201'] = r['200'];
        delete r['200'];
      },
      { operation: 'GET /assets', path: /responses\.200$/, description: /Removed\] Response 200/ },
    ],
    [
      'a new required request field (the schema had no required list)',
      (s) => (s.components.schemas.CreateEditorVideoRequest.required = ['title']),
      {
        operation: 'POST /editor/videos',
        path: /requestBody\.content\.application\/json\.schema\.required\.0$/,
        description: /required status to `title`/,
      },
    ],
    [
      'a new required request field (added to a required list)',
      (s) => s.components.schemas.UploadEditorMediaRequest.required.push('title'),
      {
        operation: 'POST /editor/media',
        path: /requestBody\.content\.application\/json\.schema\.required\.\d+$/,
        description: /required status to `title`/,
      },
    ],
    [
      'a new required query parameter',
      (s) => s.paths['/editor/media'].get.parameters.push({ name: 'folder', in: 'query', required: true, schema: { type: 'string' } }),
      { operation: 'GET /editor/media', path: /parameters/ },
    ],
    [
      'a narrowed enum in a request (query parameter)',
      (s) => {
        const values = s.components.schemas.EditorMediaType.enum;
        s.paths['/editor/media'].get.parameters[0].schema = { type: 'string', enum: values.slice(1) };
      },
      { operation: 'GET /editor/media', path: /parameters\.0\.schema\.enum\.0$/ },
    ],
    [
      'a changed type in a request',
      (s) => (s.components.schemas.CreateEditorVideoRequest.properties.fps.type = 'string'),
      { operation: 'POST /editor/videos', path: /schema\.properties\.fps\.type$/, description: /type definition of `fps`/ },
    ],
    [
      'a narrowed 3.1 type array in a request (null no longer allowed)',
      (s) => (s.components.schemas.CreateGenerationRequest.properties.preset_id.type = 'string'),
      { operation: 'POST /generations', path: /schema\.properties\.preset_id\.type/ },
    ],
    [
      'a changed type in a response',
      (s) => (s.components.schemas.Generation.properties.progress = { type: 'string' }),
      { operation: 'GET /generations/{id}', path: /responses\.200\..*properties\.progress\.type$/ },
    ],
    [
      'a changed const in a response',
      (s) => (s.components.schemas.Generation.properties.object.const = 'job'),
      { operation: 'GET /generations/{id}', path: /properties\.object\.const$/ },
    ],
    [
      'a removed status',
      (s) => delete s.paths['/generations/{id}'].get.responses['404'],
      {
        operation: 'GET /generations/{id}',
        path: /^paths\.\/generations\/\{id\}\.get\.responses\.404$/,
        description: /Removed\] Response 404/,
      },
    ],
  ];
  t.ok(
    released.components.schemas.CreateGenerationRequest.properties.preset_id.type.includes('null'),
    'preset_id is a type array with null',
  );
  for (const [name, edit, where] of breaks) {
    const r = gate(edited(edit));
    t.equal(r.ok, false, `${name}: fails the gate\n${r.message}`);
    const hit = r.breaking.find(
      (c) => c.operation === where.operation && where.path.test(c.path) && (!where.description || where.description.test(c.description)),
    );
    t.ok(hit, `${name}: a breaking change at ${where.operation} ${where.path}\n${r.message}`);
    t.match(
      r.message,
      new RegExp(`breaking +${where.operation.replace(/[{}/]/g, (c) => `\\${c}`)}: `),
      `${name}: the message names ${where.operation}`,
    );
    t.match(r.message, /BREAKING: \d+ breaking change\(s\) and info\.version 1\.0\.0 keeps major 1; .*raise the major version \(2\.0\.0\)/);
  }
});

t.test('additive changes pass', async (t) => {
  const optional = edited((s) => {
    s.components.schemas.CreateEditorVideoRequest.properties.tone = { type: 'string', enum: ['calm', 'bold'] };
    s.components.schemas.Generation.properties.thumbnail_url = { type: ['string', 'null'], format: 'uri' };
    s.components.schemas.Generation.required.push('thumbnail_url');
  });
  let r = gate(optional);
  t.ok(r.ok, `a new optional request field and a new response field:\n${r.message}`);
  t.same(r.breaking, []);
  t.ok(
    r.changes.some((c) => c.type === 'non-breaking' && c.operation === 'POST /editor/videos' && /properties\.tone$/.test(c.path)),
    r.message,
  );

  const widened = edited((s) => s.components.schemas.CreateEditorVideoRequest.properties.tone.enum.push('playful'), optional);
  r = gate(widened, optional);
  t.ok(r.ok, `a widened enum in a request:\n${r.message}`);
  t.ok(
    r.changes.some((c) => c.type === 'non-breaking' && /properties\.tone\.enum\.2$/.test(c.path)),
    r.message,
  );

  r = gate(edited((s) => s.components.schemas.GenerationStatus.enum.push('cancelled')));
  t.ok(r.ok, `a value added to a response enum (clients accept unknown values):\n${r.message}`);
  t.ok(
    r.changes.some((c) => c.operation === 'GET /generations/{id}' && /enum\.\d+$/.test(c.path) && /unknown enum values/.test(c.rule ?? '')),
    r.message,
  );
  t.match(released.info.description, /accept unknown enum values/, 'the released contract promises it');

  r = gate(
    edited((s) => (s.paths['/assets/recent'] = { get: { ...structuredClone(s.paths['/assets'].get), operationId: 'listRecentAssets' } })),
  );
  t.ok(r.ok, `a new operation:\n${r.message}`);
  t.ok(
    r.changes.some((c) => c.type === 'non-breaking' && c.operation === 'GET /assets/recent'),
    r.message,
  );

  r = gate(edited((s) => (s.paths['/assets'].get.description = 'Reworded.')));
  t.ok(r.ok, `a reworded description:\n${r.message}`);
});

t.test('a nullable field rewritten as a shared schema or null is the same field; another alternative is a break', async (t) => {
  t.same(base.components.schemas.EditorMediaUpload.properties.video_id.type, ['integer', 'null'], 'released: a type array');
  const rewritten = (kind: 'oneOf' | 'anyOf', more: any[] = []) =>
    edited((s) => {
      s.components.schemas.SharedId = { type: 'integer', format: 'int64', minimum: 1, maximum: 9007199254740991 };
      s.components.schemas.EditorMediaUpload.properties.video_id = {
        description: 'The editor video, else null.',
        [kind]: [{ $ref: '#/components/schemas/SharedId' }, { type: 'null' }, ...more],
      };
    });
  for (const kind of ['oneOf', 'anyOf'] as const) {
    const r = gate(rewritten(kind));
    t.ok(r.ok, `${kind} of the shared schema and null:\n${r.message}`);
    t.same(r.breaking, []);
  }
  const widened = gate(rewritten('anyOf', [{ type: 'string' }]));
  t.equal(widened.ok, false, `a third alternative (a string) in a response is a break:\n${widened.message}`);
  const lowered = gate(
    edited(
      (s) =>
        (s.components.schemas.EditorMediaUpload.properties.video_id = {
          anyOf: [{ type: 'integer', format: 'int64', minimum: 0, maximum: 9007199254740991 }, { type: 'null' }],
        }),
    ),
  );
  t.equal(lowered.ok, false, `a lowered minimum in a response is still a break:\n${lowered.message}`);
});

t.test('a removed 501 not_implemented response is a capability landing, not a break', async (t) => {
  const with501 = Object.entries<any>(base.paths).flatMap(([p, item]) =>
    Object.entries<any>(item)
      .filter(([, op]) => op?.responses?.['501'])
      .map(([m]) => `${m.toUpperCase()} ${p}`),
  );
  t.ok(with501.length > 0, `the released contract declares 501 on ${with501.join(', ')}`);
  const r = gate(
    edited((s) => {
      for (const item of Object.values<any>(s.paths)) for (const op of Object.values<any>(item)) delete op?.responses?.['501'];
    }),
  );
  t.ok(r.ok, r.message);
  for (const op of with501)
    t.ok(
      r.changes.some((c) => c.operation === op && c.type === 'non-breaking' && /501 not_implemented/.test(c.rule ?? '')),
      `${op}: reclassified by the rule\n${r.message}`,
    );
  // A pending operation may change freely as it lands (here: a new required field and a changed
  // response type); the same change to an implemented operation is still caught.
  const landed = gate(
    edited((s) => {
      delete s.paths['/slideshows'].post.responses['501'];
      s.components.schemas.CreateSlideshowRequest.required = [
        ...(s.components.schemas.CreateSlideshowRequest.required ?? []),
        'brand_voice',
      ];
      s.components.schemas.CreateSlideshowRequest.properties.brand_voice = { type: 'string' };
    }),
  );
  t.ok(landed.ok, landed.message);
  t.ok(
    landed.changes.some(
      (c) => c.operation === 'POST /slideshows' && /required/.test(c.path) && /pending \(501 not_implemented\)/.test(c.rule ?? ''),
    ),
    landed.message,
  );
  const implemented = gate(
    edited(
      (s) =>
        (s.components.schemas.CreateGenerationRequest.required = [...s.components.schemas.CreateGenerationRequest.required, 'brand_voice']),
    ),
  );
  t.equal(implemented.ok, false, 'the same change to an implemented operation is a break');
  const removedPending = gate(edited((s) => delete s.paths['/slideshows'].post));
  t.equal(removedPending.ok, false, `removing a pending operation is still a break:\n${removedPending.message}`);

  // Any other 501 (not the not_implemented envelope) is still a removed status.
  const removedOther = gate(
    base,
    edited((s) => (s.paths['/assets'].get.responses['501'] = { description: 'Gateway says no.' })),
  );
  t.equal(removedOther.ok, false, `removing a 501 that is not not_implemented is breaking:\n${removedOther.message}`);
});

t.test('raising the major version allows a break; a minor bump does not', async (t) => {
  const removal = (version: string) =>
    edited((s) => {
      delete s.paths['/assets'].get;
      s.info.version = version;
    });
  const major = gate(removal('2.0.0'));
  t.ok(major.ok, major.message);
  t.equal(major.majorRaised, true);
  t.equal(major.breaking.length, 1, 'the break is still listed');
  t.match(major.message, /allowed: the major version was raised \(1\.0\.0 -> 2\.0\.0\)/);
  const minor = gate(removal('1.1.0'));
  t.equal(minor.ok, false, minor.message);
});

t.test('npm run contract:diff exits 1 on a break and names it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-diff-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(edited((s) => delete s.paths['/generations/{id}'].get.responses['404'], released)));
  const r = await run(process.execPath, ['scripts/contract-diff.ts', '--spec', file], { cwd: root }).catch((e) => e);
  t.equal(r.code, 1, r.stdout);
  t.match(
    r.stdout,
    /breaking +GET \/generations\/\{id\}: \[Removed\] Response 404 \(at paths\.\/generations\/\{id\}\.get\.responses\.404\)/,
  );
  t.match(r.stdout, /BREAKING: 1 breaking change/);
});
