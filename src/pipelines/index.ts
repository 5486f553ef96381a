// Every pipeline, once. The binder's handler table (operations/registry.ts) and the worker's job
// list (JOBS below, which jobs/boss.ts is handed by server.ts) are derived from this list; each job declaration carries its own queue name
// and payload version. A new pipeline: its folder (request, handlers, job, stages, rows and an
// index.ts declaring it) and one line here.
import type { AnyJob } from '../jobs/define-job.ts';
import type { HandlerMap } from '../handlers.ts';
import { maintenanceJob } from '../services/platform/maintenance.ts';
import { webhookDeliveryJob } from '../services/webhooks/delivery-job.ts';
import type { Pipeline } from './types.ts';
import { pipeline as generation } from './generation/index.ts';
import { pipeline as editorExport } from './editor-export/index.ts';
import { pipeline as referenceAnalysis } from './reference-analysis/index.ts';
import { pipeline as slideshow } from './slideshow/index.ts';
import { pipeline as facelessVideo } from './faceless-video/index.ts';
import { pipeline as socialPublication } from './social-publication/index.ts';

export const PIPELINES: readonly Pipeline[] = [generation, editorExport, referenceAnalysis, slideshow, facelessVideo, socialPublication];

/** The pipelines' handler modules, by pipeline name (the binder adds the domain modules of src/operations/). */
export const PIPELINE_HANDLERS: Record<string, HandlerMap> = Object.fromEntries(PIPELINES.map((p) => [p.name, p.handlers]));

/** The pipelines' jobs. */
export const PIPELINE_JOBS: readonly AnyJob[] = PIPELINES.flatMap((p) => p.jobs);

/** Every job a worker process runs: the pipelines' and the infrastructure's (housekeeping, webhook deliveries). */
export const JOBS: readonly AnyJob[] = [...PIPELINE_JOBS, maintenanceJob, webhookDeliveryJob];
