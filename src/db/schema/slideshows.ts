// Slideshows (carousels): the request as resolved when it was charged, the pipeline's state and
// what each stage stored, so a retried job resumes where the last attempt stopped (copy written
// once, slides rendered once each, the project filled once) instead of doing it again.
import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { organizations } from './core.ts';
import { editorVideos } from './editor.ts';
import { media } from './generations.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One slideshow. `video_id` is its editor project, created with it (same transaction as the
 * charge). Status: queued → generating → completed | error (error is refunded once:
 * `refunded_at`). `stage` names the pipeline stage while generating: copy, slides, project, video.
 */
export const slideshows = pgTable(
  'slideshows',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    videoId: bigint('video_id', { mode: 'number' })
      .notNull()
      .references(() => editorVideos.videoId),
    status: text('status', { enum: ['queued', 'generating', 'completed', 'error', 'canceled'] })
      .notNull()
      .default('queued'),
    stage: text('stage', { enum: ['copy', 'slides', 'project', 'video'] }),
    progress: integer('progress').notNull().default(0),
    title: text('title').notNull(),
    slideCount: integer('slide_count').notNull(),
    aspectRatio: text('aspect_ratio').notNull(),
    /** The resolved request (inputs, brand kit, reference, language…): what the job renders. */
    spec: jsonb('spec').notNull(),
    credits: integer('credits').notNull(),
    /** The slide copy, once written (reused by a retried job, so the text never changes). */
    copy: jsonb('copy'),
    /** The project version the job's timeline produced (set once: a retry does not fill it again). */
    projectVersion: integer('project_version'),
    /**
     * The stage runner's state (src/kernel/stages.ts): its record of each stage's runs (the attempts
     * that started it, when it started and finished) and timings, and the video stage's output; the
     * other stages store theirs in the columns and rows named here.
     */
    state: jsonb('state').notNull().default(sql`'{}'::jsonb`),
    videoMediaId: uuid('video_media_id').references(() => media.id),
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
    // GET /slideshows: keyset pages newest first by (created_at, id), unfiltered or by status.
    index('slideshows_org_idx').on(t.orgId, t.createdAt, t.id),
    index('slideshows_org_status_idx').on(t.orgId, t.status, t.createdAt, t.id),
    check('slideshows_slide_count_range', sql`${t.slideCount} between 1 and 10`),
    check('slideshows_progress_range', sql`${t.progress} between 0 and 100`),
    check('slideshows_credits_non_negative', sql`${t.credits} >= 0`),
    check('slideshows_completed_has_video', sql`${t.status} <> 'completed' or ${t.videoMediaId} is not null`),
  ],
);

/** A rendered slide: its image (a media row) and the text shown over it (null without overlays). */
export const slideshowSlides = pgTable(
  'slideshow_slides',
  {
    slideshowId: uuid('slideshow_id')
      .notNull()
      .references(() => slideshows.id),
    index: integer('index').notNull(),
    mediaId: uuid('media_id')
      .notNull()
      .references(() => media.id),
    text: text('text'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.slideshowId, t.index] })],
);
