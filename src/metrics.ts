// The process's Prometheus metrics (prom-client): one registry per process, written by the layers
// that know each fact and read by GET /metrics (src/http/metrics.ts). A leaf module: services,
// jobs and the MCP adapter import it, it imports nothing of ours.
//
// Every series is this process's own (counters start at 0 when it starts): with several API or
// worker processes, Prometheus scrapes each one and sums across them.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();

let collecting = false;
/**
 * Adds prom-client's default process metrics (CPU, memory, heap, event-loop lag, handles, GC),
 * once per process; called by the processes that serve /metrics (the admin CLI never starts them).
 */
export function collectProcessMetrics(): void {
  if (collecting) return;
  collecting = true;
  collectDefaultMetrics({ register: registry });
}

/** Every HTTP request, when its answer is written: by operationId (a route's pattern for routes outside the contract), method and status. */
export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by operation (the operationId; the route pattern for routes outside the contract, "(no route)" when none matched), method and status code, in seconds',
  labelNames: ['operation', 'method', 'status_code'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

/** MCP tools/call results by tool and outcome (`success`, or the error code of an isError result). */
export const mcpAnswerCacheHits = new Counter({
  name: 'mcp_answer_cache_hits_total',
  help: 'MCP requests answered from the kept answers of the catalog tool (src/mcp/answer-cache.ts), not by the SDK',
  registers: [registry],
});

export const mcpToolCalls = new Counter({
  name: 'mcp_tool_calls_total',
  help: 'MCP tool calls by tool and outcome: "success", or the error code of the error result',
  labelNames: ['tool', 'outcome'] as const,
  registers: [registry],
});

/** Jobs waiting (queued: created or waiting for a retry) and running (active), by queue; read from pg-boss at scrape time. */
export const queueDepth = new Gauge({
  name: 'job_queue_depth',
  help: "Jobs of each pg-boss queue by state: queued (waiting, retries included) or active (running), as of pg-boss's latest count (every JOB_SUPERVISE_SECONDS, 10 s by default)",
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
});

export type JobOutcome = 'completed' | 'failed' | 'retried';

/** One attempt of a job, by queue and outcome: completed, failed (terminally: no retry follows) or retried. */
export const jobDuration = new Histogram({
  name: 'job_duration_seconds',
  help: 'Job attempts by queue and outcome (completed; failed: terminal, refunded where the job charged; retried: another attempt follows), in seconds',
  labelNames: ['queue', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
  registers: [registry],
});

/** Credits deducted by the charged command, counted when its transaction committed, by operationId. */
export const creditsCharged = new Counter({
  name: 'credits_charged_total',
  help: 'Credits deducted for paid operations (idempotent replays deduct nothing), by operationId',
  labelNames: ['operation'] as const,
  registers: [registry],
});

/** Credits given back for failed work, by ledger reason (generation_refund, reference_refund, …). */
export const creditsRefunded = new Counter({
  name: 'credits_refunded_total',
  help: 'Credits refunded for work that failed terminally, by ledger reason',
  labelNames: ['reason'] as const,
  registers: [registry],
});
