// A real S3 API server for tests: s3rver (an implementation of the S3 REST API in Node, objects in
// a temporary folder) on 127.0.0.1 with one bucket, and the environment that points the service at it.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { Test } from 'tap';

const S3rver = createRequire(import.meta.url)('s3rver') as new (
  opts: Record<string, unknown>,
) => {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
  httpServer: import('node:http').Server;
};

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** STORAGE=s3 and the S3_* variables of this server and bucket. */
  env: Record<string, string>;
  /** Method and URL (path and query) of every request the server received, in order. */
  requests: string[];
  /** Stops the server (an S3 outage); the folder stays until teardown. */
  stop(): Promise<void>;
  /** Keys (with their sizes) of the bucket's objects under `prefix`, read back over the S3 API. */
  list(prefix?: string): Promise<{ key: string; bytes: number }[]>;
}

/** s3rver's fixed credentials. */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export async function startS3(t: Test, opts: { bucket?: string; buckets?: string[] } = {}): Promise<TestS3> {
  const bucket = opts.bucket ?? 'media-test';
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory,
    silent: true,
    configureBuckets: (opts.buckets ?? [bucket]).map((name) => ({ name })),
  });
  const { port } = await server.run();
  const requests: string[] = [];
  server.httpServer.on('request', (req) => requests.push(`${req.method} ${req.url}`));
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: CREDENTIALS });
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    server.httpServer.closeAllConnections();
    await server.close();
  };
  t.teardown(async () => {
    client.destroy();
    await stop();
    fs.rmSync(directory, { recursive: true, force: true });
  });
  return {
    endpoint,
    bucket,
    env: {
      STORAGE: 's3',
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: '1',
      S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    requests,
    stop,
    async list(prefix = '') {
      const out: { key: string; bytes: number }[] = [];
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken }));
        for (const o of page.Contents ?? []) out.push({ key: o.Key!, bytes: o.Size ?? 0 });
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
      return out;
    },
  };
}
