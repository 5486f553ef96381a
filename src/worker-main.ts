// npm run worker: job workers alone, for scale-out next to API-only nodes.
import module from 'node:module';
import { registerFastResolve } from './boot/fast-resolve.ts';
import { handleSignals, ShutdownRequested } from './lifecycle.ts';
// V8 code and stripped TypeScript cached on disk (os.tmpdir()), as in src/main.ts.
module.enableCompileCache?.();
registerFastResolve();
// Signal handlers first: a SIGTERM or Ctrl-C during start-up stops what was started, in order.
const life = handleSignals('media-api worker');

const { loadConfig } = await import('./config.ts');
const { createLogger } = await import('./logger.ts');
const { startService } = await import('./server.ts');
const { StorageUnavailable } = await import('./storage/index.ts');
const { ImageModelConfigError } = await import('./boot/image-models.ts');

const config = loadConfig();
const log = createLogger(config.logLevel);
life.setLogger(log);
// postgres.js can throw outside any handler when PostgreSQL drops connections: logged, not fatal (src/db/outage.ts).
(await import('./db/outage.ts')).guardPostgresDriverCrash(log);
life.setDeadline((config.shutdownGraceSeconds + 30) * 1000);

try {
  const service = await startService({ config, log, api: false, workers: true, signal: life.signal });
  life.onShutdown(() => service.stop());
  process.stdout.write(`media-api worker: running queues against ${config.databaseUrl ? 'DATABASE_URL' : config.dataDir}\n`);
} catch (err) {
  if (err instanceof StorageUnavailable || err instanceof ImageModelConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78);
  }
  if (!(err instanceof ShutdownRequested)) throw err;
  life.onShutdown(async () => {}); // everything started was stopped by startService
}
