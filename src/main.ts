// npm start: the API and the job workers in one process (API_ONLY=1 for API nodes only).
import { loadConfig } from './config.ts';
import { BindError } from './operations/registry.ts';
import { startService } from './server.ts';
import { ensureDemoWorkspace } from './services/demo.ts';

const config = loadConfig();
const say = (s: string) => process.stdout.write(`${s}\n`);

say(`media-api: starting (${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${config.dataDir}`}) …`);
let service: Awaited<ReturnType<typeof startService>>;
try {
  service = await startService({ config });
} catch (err) {
  if (err instanceof BindError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78);
  }
  throw err;
}
say(`media-api: API listening on ${service.address}/api/v1 (workers ${service.boss ? 'on' : 'off'})`);

if (config.demoWorkspace) {
  const demo = await ensureDemoWorkspace(service.ctx.db);
  if (demo) {
    say('');
    say('First run: created a demo workspace (paid plan, 1000 credits) and an API key. The key is shown once:');
    say(`  workspace ${demo.org.id}`);
    say(`  api key   ${demo.key}`);
    say('Try it:');
    say(`  curl -H "Authorization: Bearer ${demo.key}" ${config.publicBaseUrl}/api/v1/assets`);
    say(`  curl ${config.publicBaseUrl}/api/v1/models`);
    say('');
  }
}

let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    say(`media-api: ${sig}, shutting down …`);
    service.stop().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`shutdown failed: ${err}\n`);
        process.exit(1);
      },
    );
  });
}
