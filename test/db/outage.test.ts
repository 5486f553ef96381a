// Which stray errors the driver-bug guard (src/db/outage.ts) keeps the process alive through:
// only lost-connection errors the database driver raised with nobody awaiting them; anything
// else still ends the process.
import net from 'node:net';
import t from 'tap';
import { isPostgresDriverCrash, isPostgresDriverOrphanRejection } from '../../src/db/outage.ts';

/** A real `read ECONNRESET` from Node, as a driver's socket sees it when PostgreSQL dies. */
async function resetError(): Promise<Error> {
  const server = net.createServer((s) => s.once('data', () => s.resetAndDestroy()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    return await new Promise<Error>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => c.write('x'));
      c.on('error', resolve);
    });
  } finally {
    server.close();
  }
}

t.test('a bare socket error nobody awaited is the driver orphan; one raised in our code is not', async (t) => {
  const err = await resetError();
  t.match(err, { code: 'ECONNRESET', syscall: 'read' });
  t.ok(isPostgresDriverOrphanRejection(err, 'unhandledRejection'), 'Node-internal frames only: kept alive');
  t.notOk(isPostgresDriverOrphanRejection(err, 'uncaughtException'), 'only as an unhandled rejection');
  const ours = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' });
  t.notOk(isPostgresDriverOrphanRejection(ours, 'unhandledRejection'), 'with a frame of ours: not swallowed');
  t.notOk(isPostgresDriverOrphanRejection(new Error('boom'), 'unhandledRejection'), 'any other error: not swallowed');
});

t.test('only a TypeError thrown from postgres.js connection.js is the driver crash', async (t) => {
  const crash = new TypeError("Cannot read properties of null (reading 'write')");
  crash.stack = `TypeError: Cannot read properties of null (reading 'write')\n    at nextWrite (/app/node_modules/postgres/src/connection.js:254:12)\n    at Socket.ready (/app/node_modules/postgres/src/connection.js:390:5)`;
  t.ok(isPostgresDriverCrash(crash));
  const elsewhere = new TypeError('x is not a function');
  t.notOk(isPostgresDriverCrash(elsewhere), 'a TypeError of our own still ends the process');
});
