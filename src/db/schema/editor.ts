// Videos and the editor: the shared integer id space of every video (editor projects now,
// faceless videos and slideshow videos later), editable projects with their timeline document,
// the per-project edit history, word timings of media (synthesized voiceovers, transcriptions)
// and timeline exports (renders).
import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  doublePrecision,
  index,
  integer,
  json,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { organizations } from './core.ts';
import { media } from './generations.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One row per video of any kind: the integer id space that GET /videos/{id} serves. An editor
 * project is `kind = 'editor'` with its data in editor_videos; faceless videos (a later issue)
 * add `kind = 'faceless'` rows and a table of their own keyed by the same id.
 */
export const videos = pgTable(
  'videos',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity({ startWith: 1000 }),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    kind: text('kind', { enum: ['editor', 'faceless'] }).notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('videos_org_idx').on(t.orgId, t.id),
    // GET /videos: keyset pages newest first by (created_at, id), unfiltered or by kind.
    index('videos_org_created_idx').on(t.orgId, t.createdAt, t.id),
    index('videos_org_kind_idx').on(t.orgId, t.kind, t.createdAt, t.id),
    check('videos_kind_valid', sql`${t.kind} in ('editor', 'faceless')`),
  ],
);

/**
 * An editable project. The timeline (tracks, items and id counters) is one JSON document,
 * replaced as a whole by every change under the row's lock; `version` counts the changes. It is
 * `json`, not `jsonb`: it is only ever read and written whole, and json skips the binary
 * conversion both ways (a 200-item project is about 120 KB).
 */
export const editorVideos = pgTable(
  'editor_videos',
  {
    videoId: bigint('video_id', { mode: 'number' })
      .primaryKey()
      .references(() => videos.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    title: text('title').notNull(),
    aspectRatio: text('aspect_ratio').notNull(),
    width: integer('width').notNull(),
    height: integer('height').notNull(),
    fps: doublePrecision('fps').notNull(),
    version: integer('version').notNull().default(1),
    timeline: json('timeline').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('editor_videos_org_idx').on(t.orgId, t.createdAt, t.videoId),
    check('editor_videos_version_positive', sql`${t.version} >= 1`),
  ],
);

/** One applied PATCH: the version it produced, the user's instructions and the operations. */
export const editorEdits = pgTable(
  'editor_edits',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    videoId: bigint('video_id', { mode: 'number' })
      .notNull()
      .references(() => editorVideos.videoId),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    version: integer('version').notNull(),
    instructions: text('instructions'),
    operations: jsonb('operations').notNull(),
    operationCount: integer('operation_count').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('editor_edits_video_version_idx').on(t.videoId, t.version)],
);

/**
 * Word timings of a media file, in milliseconds from the start of the file: exact for speech we
 * synthesized (source synthesis), or from the transcription provider (source transcription).
 */
export const mediaTranscripts = pgTable('media_transcripts', {
  mediaId: uuid('media_id')
    .primaryKey()
    .references(() => media.id),
  orgId: uuid('org_id')
    .notNull()
    .references(() => organizations.id),
  source: text('source', { enum: ['synthesis', 'transcription'] }).notNull(),
  language: text('language'),
  text: text('text').notNull(),
  words: jsonb('words').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

/** A render of a project version to MP4 (queued on pg-boss; the project is snapshotted). */
export const editorExports = pgTable(
  'editor_exports',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    videoId: bigint('video_id', { mode: 'number' })
      .notNull()
      .references(() => editorVideos.videoId),
    version: integer('version').notNull(),
    status: text('status', { enum: ['queued', 'rendering', 'completed', 'failed', 'canceled'] })
      .notNull()
      .default('queued'),
    progress: integer('progress').notNull().default(0),
    /** The project as it was when the export was requested, plus render settings. */
    snapshot: jsonb('snapshot').notNull(),
    outputMediaId: uuid('output_media_id').references(() => media.id),
    error: jsonb('error'),
    attempts: integer('attempts').notNull().default(0),
    jobId: text('job_id'),
    startedAt: ts('started_at'),
    completedAt: ts('completed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('editor_exports_video_idx').on(t.videoId, t.createdAt),
    check('editor_exports_progress_range', sql`${t.progress} between 0 and 100`),
    check('editor_exports_completed_has_output', sql`${t.status} <> 'completed' or ${t.outputMediaId} is not null`),
  ],
);
