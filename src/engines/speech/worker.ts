// The local synthesizers run as separate programs (./espeak-worker.ts, ./flite-worker.ts): a JSON
// request on stdin, a JSON reply ({ok: true, …} or {ok: false, error}) on stdout, the audio in a
// file the request names. runSpeechWorker is the caller's side: the child runs under the render
// guard (it dies with this process), is killed after the timeout, and any failure is a SpeechFailed.
import { killGuarded, spawnGuarded } from '../../media/child-guard.ts';
import { SpeechFailed } from './types.ts';

/** Runs the worker program `script` with `request`; resolves with its reply when it says ok. */
export function runSpeechWorker<T extends { ok: boolean; error?: string }>(script: string, request: object, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const child = spawnGuarded(process.execPath, [script], { stdin: 'pipe' });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => killGuarded(child), timeoutMs);
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.stderr!.on('data', (c: Buffer) => err.push(c));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new SpeechFailed(`could not start the speech synthesizer: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const raw = Buffer.concat(out).toString('utf8');
      try {
        const parsed = JSON.parse(raw) as T;
        if (parsed.ok) return resolve(parsed);
        return reject(new SpeechFailed(`speech synthesis failed: ${parsed.error}`));
      } catch {
        reject(
          new SpeechFailed(`speech synthesis failed (${signal ?? `exit ${code}`}): ${Buffer.concat(err).toString('utf8').slice(-300)}`),
        );
      }
    });
    child.stdin!.end(JSON.stringify(request));
  });
}
