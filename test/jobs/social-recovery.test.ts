// A worker killed (kill -9 of its process group) between X's media upload and the tweet — its
// POST /2/tweets hanging at the fake — leaves a job another worker finishes from the stored media
// id: one upload (INIT once, each segment once) and one tweet.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { media } from '../../src/db/schema/index.ts';
import { connectAccount } from '../../src/services/social/accounts.ts';
import { loadTokenKey, tokenCipher } from '../../src/services/social/token-crypto.ts';
import { startTestApp } from '../helpers/app.ts';
import { connect } from '../mcp/helpers.ts';
import { fakeX } from '../social/fakes.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-api-social-recovery-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const X = await fakeX(t);
const api = await startTestApp(t, { DATA_DIR: dataDir, JOB_HEARTBEAT_SECONDS: '10', SOCIAL_API_BASE_X: X.url });
const sql = api.service.ctx.sql;

function worker(): ChildProcess {
  const child = spawn(process.execPath, ['src/worker-main.ts'], {
    cwd: root,
    detached: true,
    env: {
      ...process.env,
      DATABASE_URL: api.databaseUrl,
      DATA_DIR: dataDir, // the same media folder and secrets.key
      MEDIA_SIGNING_SECRET: 'test-media-signing-secret',
      JOB_HEARTBEAT_SECONDS: '10',
      SOCIAL_API_BASE_X: X.url,
      LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  });
  return child;
}

async function until(what: string, fn: () => Promise<boolean> | boolean, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

t.test('kill -9 between upload and tweet, then another worker posts once', async (t) => {
  const ws = await api.workspace({ scopes: ['social:write'] });
  const tok = X.grant();
  const cipher = tokenCipher(await loadTokenKey(api.service.ctx.config));
  const acc = await connectAccount(api.service.ctx.db, cipher, { orgId: ws.orgId, platform: 'x', handle: 'killed', accessToken: tok.access, refreshToken: tok.refresh, platformAccountId: '42' });
  const id = randomUUID();
  const key = `editor-media/${ws.orgId}/${id}.mp4`;
  const bytes = 5 * 1024 * 1024 + 777;
  await api.service.ctx.storage.put(key, Buffer.alloc(bytes, 7), 'video/mp4');
  await api.service.ctx.db.insert(media).values({ id, orgId: ws.orgId, kind: 'video', source: 'upload', contentType: 'video/mp4', sizeBytes: bytes, storageKey: key, width: 1280, height: 720, durationSeconds: 15, hasAudio: true });

  const client = await connect(api, ws.key);
  t.teardown(() => client.close());
  const res = await client.callTool({ name: 'publish_media_to_social', arguments: { account_ids: [acc.id], media_id: id, caption: 'survives a crash' } });
  t.notOk(res.isError, JSON.stringify(res.structuredContent));
  const pubId = (res.structuredContent as { id: string }).id;

  X.state.hangNextTweet = true;
  const first = worker();
  await until('the first worker reaches POST /2/tweets', () => X.state.tweetAttempts === 1, 90_000);
  const [mid] = await sql<{ status: string; state: any }[]>`select status, state from social_publication_targets where publication_id = ${pubId}`;
  t.equal(mid.status, 'publishing');
  t.match(mid.state, { media: [{ id: /^\d+$/, next_segment: 2, finalized: true, ready: true }] }, 'the upload was stored before the tweet');
  process.kill(-first.pid!, 'SIGKILL');

  worker();
  await until('another worker publishes it', async () => {
    const [r] = await sql<{ status: string }[]>`select status from social_publication_targets where publication_id = ${pubId}`;
    return r.status === 'published' || r.status === 'failed';
  }, 150_000);
  const get = await client.callTool({ name: 'get_social_publication', arguments: { id: pubId } });
  const pub = get.structuredContent as { status: string; results: { post_id: string }[] };
  t.equal(pub.status, 'published', JSON.stringify(pub));
  t.equal(X.state.uploads.size, 1, 'one upload');
  t.same([...X.state.uploads.values()][0].segments.map((s) => s.index), [0, 1], 'each segment once');
  t.equal(X.state.tweets.length, 1, 'one tweet');
  t.equal(X.state.tweetAttempts, 2, 'the hung attempt and the resumed one');
  t.equal(pub.results[0].post_id, X.state.tweets[0].id);
});
