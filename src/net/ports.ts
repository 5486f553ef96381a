// Local TCP ports: whether a port on 127.0.0.1 can be listened on, and a free one picked by the
// kernel. Used to give the embedded PostgreSQL, test apps, benches and the media runner a port.
import net from 'node:net';

/** Listens on `port` of 127.0.0.1 (0: any free one) and closes again: the port bound, or undefined when it is taken. */
export function listenOn(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const { port: bound } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(bound));
    });
  });
}

/** A port of 127.0.0.1 that was free a moment ago (the kernel's pick). */
export async function freePort(): Promise<number> {
  const port = await listenOn(0);
  if (!port) throw new Error('no free local port');
  return port;
}
