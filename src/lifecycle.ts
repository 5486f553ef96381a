// The process lifecycle of every entry point (npm start, npm run worker, the admin CLI). Signal
// handlers are installed on the first line of `main`, before any start-up work, so a SIGTERM or
// Ctrl-C at any moment takes one path:
//   - the first SIGTERM/SIGINT aborts `signal` (start-up steps check it and undo what they started)
//     and runs the shutdown registered with `onShutdown` (at once if it is already registered, else
//     as soon as it is); the process then exits with the code it returns (0 by default);
//   - a second signal exits at once (130 for SIGINT, 143 for SIGTERM), whatever is still running;
//   - a shutdown that has not finished `deadlineMs` after the first signal exits 1.
// Nothing else in the process may call process.exit on a signal: the embedded PostgreSQL package's
// own exit hook is removed (src/db/embedded.ts) so the database is stopped last, by the shutdown.
import type { Logger } from './context.ts';

export type Shutdown = () => Promise<number | void>;

export interface ProcessLifecycle {
  /** Aborted by the first SIGTERM/SIGINT. */
  readonly signal: AbortSignal;
  /** The shutdown to run on the first signal; run at once when a signal already arrived. */
  onShutdown(stop: Shutdown): void;
  /** The logger for the lifecycle's own lines, once the configuration is known. */
  setLogger(log: Logger): void;
  /** Hard limit of a shutdown (from its first signal), once the configuration is known. */
  setDeadline(ms: number): void;
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
const EXIT_CODE: Record<(typeof SIGNALS)[number], number> = { SIGINT: 130, SIGTERM: 143 };

/** Until the configuration (and so LOG_LEVEL) is known: plain JSON lines on stderr. */
const bootLogger = (name: string): Logger => {
  const line = (level: string) => (obj: unknown, msg?: string) =>
    process.stderr.write(
      `${JSON.stringify({ level, time: new Date().toISOString(), name, msg, ...(typeof obj === 'object' ? obj : { detail: obj }) })}\n`,
    );
  return { info: line('info'), warn: line('warn'), error: line('error') };
};

export function handleSignals(name: string, opts: { deadlineMs?: number } = {}): ProcessLifecycle {
  const controller = new AbortController();
  let log: Logger = bootLogger(name);
  let deadlineMs = opts.deadlineMs ?? 60_000;
  let received: (typeof SIGNALS)[number] | undefined;
  let shutdown: Shutdown | undefined;
  let running = false;

  const run = () => {
    if (running || !shutdown || !received) return;
    running = true;
    const timer = setTimeout(() => {
      log.error({ deadline_ms: deadlineMs }, `${name}: shutdown did not finish in time; exiting`);
      process.exit(1);
    }, deadlineMs);
    timer.unref();
    shutdown().then(
      (code) => {
        clearTimeout(timer);
        log.info({ exit_code: code ?? 0 }, `${name}: stopped`);
        process.exit(code ?? 0);
      },
      (err: unknown) => {
        clearTimeout(timer);
        log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, `${name}: shutdown failed`);
        process.exit(1);
      },
    );
  };

  for (const sig of SIGNALS) {
    process.on(sig, () => {
      if (received) {
        log.warn({ signal: sig }, `${name}: second signal, exiting at once`);
        process.exit(EXIT_CODE[sig]);
      }
      received = sig;
      log.info({ signal: sig }, `${name}: ${sig}, shutting down (a second signal exits at once)`);
      controller.abort(new ShutdownRequested(sig));
      run();
    });
  }

  return {
    signal: controller.signal,
    onShutdown(stop) {
      shutdown = stop;
      run();
    },
    setLogger(l) {
      log = l;
    },
    setDeadline(ms) {
      deadlineMs = ms;
    },
  };
}

/** The reason of the lifecycle's signal, and what start-up throws when it gives up because of it. */
export class ShutdownRequested extends Error {
  override name = 'ShutdownRequested';
  readonly signalName: string;
  constructor(signalName: string) {
    super(`${signalName} received during start-up`);
    this.signalName = signalName;
  }
}
