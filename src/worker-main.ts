// npm run worker: job workers alone, for scale-out next to API-only nodes.
import { loadConfig } from './config.ts';
import { startService } from './server.ts';

const config = loadConfig();
const service = await startService({ config, api: false, workers: true });
process.stdout.write(`media-api worker: running queues against ${config.databaseUrl ? 'DATABASE_URL' : config.dataDir}\n`);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => void service.stop().then(() => process.exit(0)));
}
