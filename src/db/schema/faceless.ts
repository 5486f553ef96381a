// Faceless videos (POST /faceless-videos): one row per video, keyed by the shared integer id of
// `videos` (kind 'faceless'). The job's stages store what they produced in `artifacts` (the
// script, the scene media, the voiceover and its word timings, the captions, the rendered MP4),
// so a re-run after a crash resumes after the last finished stage. When the video completes,
// the generated timeline is written as an `editor_videos` row with the same id: the editor
// opens, edits and exports it like any project.
import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, uuid, bigint } from 'drizzle-orm/pg-core';
import { organizations } from './core.ts';
import { media } from './generations.ts';
import { videos } from './editor.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const facelessVideos = pgTable(
  'faceless_videos',
  {
    videoId: bigint('video_id', { mode: 'number' })
      .primaryKey()
      .references(() => videos.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    title: text('title').notNull(),
    status: text('status', { enum: ['queued', 'generating', 'completed', 'error', 'canceled'] })
      .notNull()
      .default('queued'),
    /** The stage running (or where it failed): script, scenes, voiceover, captions, render. */
    stage: text('stage'),
    progress: integer('progress').notNull().default(0),
    /** The resolved request (FacelessSpec): everything the job needs. */
    spec: jsonb('spec').notNull(),
    /** Credits charged (refunded once on terminal failure). */
    credits: integer('credits').notNull(),
    /** What each finished stage produced (FacelessArtifacts). */
    artifacts: jsonb('artifacts').notNull().default(sql`'{}'::jsonb`),
    outputMediaId: uuid('output_media_id').references(() => media.id),
    error: jsonb('error'),
    attempts: integer('attempts').notNull().default(0),
    jobId: text('job_id'),
    refundedAt: ts('refunded_at'),
    startedAt: ts('started_at'),
    completedAt: ts('completed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('faceless_videos_org_idx').on(t.orgId, t.createdAt),
    check('faceless_videos_progress_range', sql`${t.progress} between 0 and 100`),
    check('faceless_videos_completed_has_output', sql`${t.status} <> 'completed' or ${t.outputMediaId} is not null`),
  ],
);
