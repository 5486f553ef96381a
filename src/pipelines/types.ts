// A pipeline's declaration: what src/pipelines/index.ts lists, and what the binder's handler table
// and the worker's job list are derived from.
import type { AnyJob } from '../jobs/define-job.ts';
import type { HandlerMap } from '../handlers.ts';

export interface Pipeline {
  /** Its folder under src/pipelines/ (and its module's name in the binder's handler table). */
  readonly name: string;
  /** The operations and MCP-only tools it serves (handlers.ts). */
  readonly handlers: HandlerMap;
  /** Its jobs (job.ts): each declaration names its queue and payload version. */
  readonly jobs: readonly AnyJob[];
}

/** Declares a pipeline (its folder's index.ts): `export const pipeline = definePipeline({ name, handlers, jobs })`. */
export const definePipeline = (p: Pipeline): Pipeline => p;
