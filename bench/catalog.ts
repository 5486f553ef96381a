// Benchmark: GET /api/v1/models on the real service against a bare Fastify server that
// returns the same bytes, measured in the same run on the same machine. Rounds alternate
// between the two to cancel drift; the median ratio is reported (target ≥ 0.8).
// Usage: node bench/catalog.ts [--duration S] [--rounds N] [--connections C]
import { parseArgs } from 'node:util';
import { load, median, startBare, startService } from './lib/servers.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
  },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const say = (s: string) => process.stdout.write(`${s}\n`);

say('catalog bench: starting the service …');
const service = await startService();
const route = '/api/v1/models';
const res = await fetch(`${service.url}${route}`);
const bytes = Buffer.from(await res.arrayBuffer());
const bare = await startBare(route, bytes, res.headers.get('content-type') ?? 'application/json');
say(`catalog bench: ${bytes.length} bytes per response; ${rounds} rounds × ${duration}s per server, ${connections} connections`);

const ours: number[] = [];
const base: number[] = [];
const ratios: number[] = [];
try {
  // Warm both up (JIT, connection pools).
  await load(`${bare.url}${route}`, { duration: 1, connections });
  await load(`${service.url}${route}`, { duration: 1, connections });
  for (let i = 0; i < rounds; i++) {
    const b = await load(`${bare.url}${route}`, { duration, connections });
    const o = await load(`${service.url}${route}`, { duration, connections });
    if (o.non2xx || o.errors) throw new Error(`service answered ${o.non2xx} non-2xx and ${o.errors} errors`);
    base.push(b.rps);
    ours.push(o.rps);
    ratios.push(o.rps / b.rps);
    say(
      `  round ${i + 1}: bare ${b.rps.toFixed(0)} req/s (p99 ${b.p99} ms) | service ${o.rps.toFixed(0)} req/s (p99 ${o.p99} ms) | ratio ${(o.rps / b.rps).toFixed(3)}`,
    );
  }
} finally {
  await service.stop();
  await bare.stop();
}
const ratio = median(ratios);
say(`catalog bench: bare median ${median(base).toFixed(0)} req/s, service median ${median(ours).toFixed(0)} req/s`);
say(`catalog bench: RATIO ${ratio.toFixed(3)} (target ≥ 0.8) ${ratio >= 0.8 ? 'MET' : 'NOT MET'}`);
