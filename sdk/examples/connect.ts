// The client every example uses: the API root and an API key, from the environment.
//   MEDIA_API_BASE_URL  the API root, e.g. https://media.example.com/api/v1
//   MEDIA_API_KEY       an API key (sent as `Authorization: Bearer …`)
import { createClient, createConfig, type Client } from '../src/client/index.ts';

export function connect(env: Record<string, string | undefined> = process.env): Client {
  const baseUrl = env.MEDIA_API_BASE_URL;
  const apiKey = env.MEDIA_API_KEY;
  if (!baseUrl || !apiKey) throw new Error('Set MEDIA_API_BASE_URL (e.g. https://media.example.com/api/v1) and MEDIA_API_KEY');
  // `auth` answers every operation whose security is the bearer scheme.
  return createClient(createConfig({ baseUrl: baseUrl.replace(/\/+$/, ''), auth: apiKey }));
}

/** Runs `main` when the file is started directly (`node sdk/examples/x.ts`) and prints its result as JSON. */
export function runIfMain(meta: ImportMeta, main: () => Promise<unknown>): void {
  if (!meta.main) return;
  main().then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (err: unknown) => {
      // With throwOnError the SDK throws the ErrorResponse envelope itself: print it whole.
      console.error(err instanceof Error ? err.message : JSON.stringify(err));
      process.exitCode = 1;
    },
  );
}
