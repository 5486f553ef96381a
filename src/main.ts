// npm start: the API and the job workers in one process (API_ONLY=1 for API nodes only).
import module from 'node:module';
import { registerFastResolve } from './boot/fast-resolve.ts';
import { handleSignals, ShutdownRequested } from './lifecycle.ts';
// V8 code and stripped TypeScript cached on disk (os.tmpdir()): the ~1,500 modules load faster on every later start.
module.enableCompileCache?.();
registerFastResolve();
// Signal handlers first: a SIGTERM or Ctrl-C during start-up stops what was started, in order.
const life = handleSignals('media-api');

const { loadConfig } = await import('./config.ts');
const { createLogger } = await import('./logger.ts');
const { BindError } = await import('./operations/registry.ts');
const { ImageModelConfigError } = await import('./boot/image-models.ts');
const { startService } = await import('./server.ts');
const { StorageUnavailable } = await import('./storage/index.ts');
const { ensureDemoWorkspace } = await import('./services/workspaces/demo.ts');

const config = loadConfig();
const log = createLogger(config.logLevel);
life.setLogger(log);
// postgres.js can throw outside any handler when PostgreSQL drops connections: logged, not fatal (src/db/outage.ts).
(await import('./db/outage.ts')).guardPostgresDriverCrash(log);
// Requests and jobs get the grace period; closing pools and stopping PostgreSQL get the rest.
life.setDeadline((config.shutdownGraceSeconds + 30) * 1000);
const say = (s: string) => process.stdout.write(`${s}\n`);

say(`media-api: starting (${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${config.dataDir}`}) …`);
let service: Awaited<ReturnType<typeof startService>> | undefined;
try {
  service = await startService({ config, log, signal: life.signal });
} catch (err) {
  if (err instanceof BindError || err instanceof StorageUnavailable || err instanceof ImageModelConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78);
  }
  if (!(err instanceof ShutdownRequested)) throw err;
  life.onShutdown(async () => {}); // everything started was stopped by startService: exit 0
}
if (service) {
  const running = service;
  life.onShutdown(() => running.stop());
  say(`media-api: API listening on ${service.address}/api/v1 (workers ${service.workers ? 'on' : 'off'})`);
}

if (service && config.demoWorkspace && !life.signal.aborted) {
  // A signal meanwhile closes the database under it: that failure is the shutdown's, not an error.
  const demo = await ensureDemoWorkspace(service.ctx.db).catch((err: unknown) => {
    if (life.signal.aborted) return undefined;
    throw err;
  });
  if (demo) {
    say('');
    say('First run: created a demo workspace (paid plan, 1000 credits), an API key and a member. The key is shown once:');
    say(`  workspace ${demo.org.id}`);
    say(`  api key   ${demo.key}`);
    say('Try it:');
    say(`  curl -H "Authorization: Bearer ${demo.key}" ${config.publicBaseUrl}/api/v1/assets`);
    say(`  curl ${config.publicBaseUrl}/api/v1/models`);
    say(`Connect an MCP client to ${config.publicBaseUrl}/mcp: it opens the OAuth sign-in page, where you sign in as`);
    say(`  ${demo.member.email} with password ${demo.member.password} (shown once; or send the API key as a Bearer token)`);
    say('');
  }
}
