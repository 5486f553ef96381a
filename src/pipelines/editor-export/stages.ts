// The export job: renders an editor project snapshot with the timeline renderer (one ffmpeg run,
// progress reported every second), stores the MP4 and completes the export; a failure becomes the
// export's error once no retry follows (defineJob). At-least-once: a repeated delivery of a
// finished export does nothing; a re-run of an interrupted one renders again and overwrites.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../../context.ts';
import { FfmpegError, probe } from '../../media/ffmpeg.ts';
import { engineFor } from '../../engines/index.ts';
import { jobFolder } from '../../media/work-folder.ts';
import { editorExportKey } from '../../storage/keys.ts';
import { completeExport, exportResource, startExport, type ExportRow, type ExportSnapshot } from './rows.ts';
import { discardIfCanceled, runCancelable } from '../../kernel/cancelable.ts';
import { runStages, type StageContext, type Stages } from '../../kernel/stages.ts';
import { copyTimelineMedia } from '../../services/editor/render-inputs.ts';
import type { FailureDetail, JobTools, RunningJob } from '../../jobs/define-job.ts';

export interface ExportJobData {
  exportId: string;
}

class MissingMedia extends Error {}
export async function runExport(ctx: AppContext, job: RunningJob<ExportJobData>, tools: JobTools): Promise<void> {
  const row = await startExport(ctx, job.data.exportId);
  if (!row) return;
  const workDir = await jobFolder(ctx.config.dataDir, `export-${row.id}`);
  try {
    // A canceled export (DELETE …/exports/{export_id}) is noticed within a second: the render is
    // aborted (its ffmpeg killed) and the partial output removed with the work folder.
    await runCancelable(ctx, exportResource, row.id, tools, async (tools) => {
      // One stage, run again in full by a retry (it overwrites the same key).
      const stages: Stages<ExportRow, { rendering: StoredExport }> = [
        { name: 'rendering', weight: 100, run: (stage) => render(ctx, row, workDir, stage) },
      ];
      const { outputs } = await runStages(ctx, exportResource, row, stages, tools);
      const out = outputs.rendering;
      // Canceled meanwhile: the stored copy belongs to no export.
      if (!(await completeExport(ctx, row, out))) await discardIfCanceled(ctx, exportResource, row.id, [out.storageKey]);
    });
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

interface StoredExport {
  storageKey: string;
  bytes: number;
  durationSeconds: number | null;
  hasAudio: boolean;
}

/** The snapshot rendered with the timeline renderer (one ffmpeg run) and stored. */
async function render(
  ctx: AppContext,
  row: ExportRow,
  workDir: string,
  { signal, report }: StageContext<ExportRow>,
): Promise<StoredExport> {
  const snap = row.snapshot as ExportSnapshot;
  const { files, lost } = await copyTimelineMedia(ctx, row.orgId, snap.timeline, workDir);
  if (lost.length) throw new MissingMedia(`media ${lost.join(', ')} of the project no longer exist`);
  const out = path.join(workDir, 'export.mp4');
  await engineFor('render', ctx).render(
    { width: snap.width, height: snap.height, fps: snap.fps, tracks: snap.timeline.tracks, items: snap.timeline.items, media: files },
    workDir,
    out,
    {
      quality: snap.quality,
      signal,
      onProgress: report,
    },
  );
  const probed = await probe({ path: out, type: 'video/mp4' }, { signal });
  const key = editorExportKey(row.orgId, row.id);
  const stored = await ctx.storage.put(key, { file: out }, 'video/mp4');
  return { storageKey: key, bytes: stored.bytes, durationSeconds: probed.duration_seconds, hasAudio: probed.has_audio };
}

export function describeFailure(err: unknown): { detail: FailureDetail; retry: boolean } {
  const permanent = err instanceof MissingMedia;
  const message =
    err instanceof FfmpegError
      ? `Rendering failed: ${err.message.split('\n').slice(-3).join(' ')}`
      : `Rendering failed: ${(err as Error)?.message ?? String(err)}`;
  return {
    detail: {
      code: permanent ? 'input_unavailable' : 'render_failed',
      message: message.slice(0, 1900),
      retryable: !permanent,
      context: {},
    },
    retry: !permanent,
  };
}
