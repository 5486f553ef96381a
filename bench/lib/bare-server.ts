// Baseline server: bare Fastify, one GET route, fixed bytes. Usage: bare-server.ts ROUTE FILE CONTENT_TYPE
import fs from 'node:fs';
import Fastify from 'fastify';

const [route, file, contentType] = process.argv.slice(2);
const body = fs.readFileSync(file);
const app = Fastify({ logger: false });
app.get(route, (_req, reply) => reply.header('content-type', contentType).send(body));
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address() as { port: number };
process.stdout.write(`listening on http://127.0.0.1:${addr.port}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
