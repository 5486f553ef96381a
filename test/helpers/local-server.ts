// Local HTTP servers of the tests (proxies in front of the service, host pages): listening on a
// free loopback port, closed in the test's teardown, and a streaming pass-through to the service.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on a free loopback port and closes (dropping open connections) in `t`'s teardown; returns the base URL. */
export async function listenLocal(t: { teardown(fn: () => unknown): void }, server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Passes `req` on to `base` (same path, method and headers, plus `headers`), streaming the body both ways. */
export function forward(req: http.IncomingMessage, res: http.ServerResponse, base: string, headers: http.OutgoingHttpHeaders = {}): void {
  const up = http.request(new URL(req.url ?? '/', base), { method: req.method, headers: { ...req.headers, ...headers } }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  up.on('error', () => res.destroy());
  res.on('close', () => up.destroy());
  req.pipe(up);
}
