// The editor export job's declaration: its queue, retries, heartbeat and dead letter; the work
// is stages.ts, a terminal failure fails the export (rows.ts).
import { EXPORT_QUEUE, exportResource, failExport } from './rows.ts';
import { defineJob } from '../../jobs/define-job.ts';
import { describeFailure, type ExportJobData, runExport } from './stages.ts';

export const editorExportJob = defineJob<ExportJobData>({
  name: EXPORT_QUEUE,
  version: 1,
  concurrency: (config) => config.exportConcurrency,
  retry: { limit: 2, delay: 2, backoff: true },
  heartbeatSeconds: (config) => config.jobHeartbeatSeconds,
  expireInSeconds: 3600,
  deadLetter: { message: 'The export was abandoned by its workers too many times' },
  run: runExport,
  describeFailure,
  progress: (ctx, data, percent, stage) => exportResource.progress(ctx, data.exportId, stage, percent),
  onTerminalFailure: (ctx, data, detail) => failExport(ctx, data.exportId, detail),
});
