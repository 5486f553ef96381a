// The social platforms are the contract's SocialPlatform enum (spec/openapi.yaml), in its order:
// the service's list (accounts, the connect page, the admin CLI's messages) and the configuration's
// per-platform variables (SOCIAL_API_BASE_<P>, SOCIAL_<P>_CLIENT_ID/_SECRET) come from it.
import fs from 'node:fs';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { isSocialPlatform, SOCIAL_PLATFORMS } from '../../src/services/social/accounts.ts';

const spec = parseYaml(fs.readFileSync(new URL('../../spec/openapi.yaml', import.meta.url), 'utf8'));
const enumOfSpec: string[] = spec.components.schemas.SocialPlatform.enum;

t.test("SOCIAL_PLATFORMS is the spec's enum, in the spec's order", async (t) => {
  t.same([...SOCIAL_PLATFORMS], enumOfSpec);
  for (const p of enumOfSpec) t.ok(isSocialPlatform(p), `${p} is a platform`);
  t.notOk(isSocialPlatform('myspace'), 'a name outside the enum is not');
});

t.test("the configuration reads each platform's variables, for exactly the spec's platforms", async (t) => {
  const env: Record<string, string> = { SOCIAL_API_BASE_MYSPACE: 'http://127.0.0.1:9', SOCIAL_MYSPACE_CLIENT_ID: 'nope' };
  for (const [i, p] of enumOfSpec.entries()) {
    env[`SOCIAL_API_BASE_${p.toUpperCase()}`] = `http://127.0.0.1:${9000 + i}/ignored/path`;
    env[`SOCIAL_${p.toUpperCase()}_CLIENT_ID`] = `id-${p}`;
    env[`SOCIAL_${p.toUpperCase()}_CLIENT_SECRET`] = `secret-${p}`;
  }
  const { social } = loadConfig(env);
  t.same(Object.keys(social.apiBase), enumOfSpec, 'an API base for each, in order; none for a name outside the enum');
  t.same(Object.keys(social.clients), enumOfSpec, 'an OAuth client for each, in order');
  for (const [i, p] of enumOfSpec.entries()) {
    t.equal(social.apiBase[p], `http://127.0.0.1:${9000 + i}`, `${p}: the origin`);
    t.same(social.clients[p], { id: `id-${p}`, secret: `secret-${p}` });
  }
});
