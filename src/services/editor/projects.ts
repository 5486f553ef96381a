// Editor projects: create, list, get, the status view of GET /videos/{id}, PATCH edits and
// adding media to a timeline. A project's timeline is one JSON document on its row; every change
// takes the row's lock (SELECT … FOR UPDATE), so concurrent changes to one project are
// serialized and none is lost, and increments `version` by one.
import { and, desc, eq, lt, or, sql } from 'drizzle-orm';
import type { components } from '../../../generated/openapi.d.ts';
import type { AppContext } from '../../context.ts';
import { rowId } from '../../db/ids.ts';
import { editorEdits, editorVideos, videos } from '../../db/schema/index.ts';
import { ApiError, badRequest } from '../../errors.ts';
import type { Tx } from '../../db/client.ts';
import { facelessStatus } from './faceless-status.ts';
import {
  decodeCursor,
  discardStored,
  encodeCursor,
  findMedia,
  ingest,
  insertMedia,
  mediaView,
  receiveBuffer,
  type MediaInsert,
} from './media.ts';
import { emptyTimeline, FRAME_SIZES, sortedItems, timelineDuration, type Item, type Timeline, type Track } from './model.ts';
import { applyOperations, EXTERNAL_OPS, OpError, placeMediaItem, type ProjectState } from './operations.ts';
import { EditResources, fetchMedia, mediaInfo, urlFilename, type MediaInfo } from './resources.ts';

type S = components['schemas'];
export type EditorVideoView = S['EditorVideo'];
type ProjectRow = typeof editorVideos.$inferSelect;
type HistoryEntry = S['EditorEditHistoryEntry'];

const HISTORY_LIMIT = 50;

export function projectView(row: ProjectRow, edits: HistoryEntry[]): EditorVideoView {
  const tl = row.timeline as Timeline;
  return {
    object: 'editor_video',
    id: row.videoId,
    title: row.title,
    status: 'ready',
    aspect_ratio: row.aspectRatio as S['EditorAspectRatio'],
    width: row.width,
    height: row.height,
    fps: row.fps,
    duration_seconds: timelineDuration(tl),
    version: row.version,
    tracks: [...tl.tracks].sort((a, b) => a.order - b.order),
    items: sortedItems(tl.items),
    edits,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

async function history(db: AppContext['db'] | Tx, videoIds: number[]): Promise<Map<number, HistoryEntry[]>> {
  const out = new Map<number, HistoryEntry[]>(videoIds.map((id) => [id, []]));
  if (!videoIds.length) return out;
  const rows = await db
    .select({
      videoId: editorEdits.videoId,
      version: editorEdits.version,
      instructions: editorEdits.instructions,
      count: editorEdits.operationCount,
      createdAt: editorEdits.createdAt,
    })
    .from(editorEdits)
    .where(
      videoIds.length === 1
        ? eq(editorEdits.videoId, videoIds[0])
        : sql`${editorEdits.id} in (select id from (select id, row_number() over (partition by video_id order by version desc) as rn from editor_edits where video_id in ${videoIds}) h where h.rn <= ${HISTORY_LIMIT})`,
    )
    .orderBy(desc(editorEdits.version))
    .limit(videoIds.length === 1 ? HISTORY_LIMIT : HISTORY_LIMIT * videoIds.length);
  for (const r of rows) {
    out
      .get(r.videoId)
      ?.push({ version: r.version, instructions: r.instructions, operation_count: r.count, created_at: r.createdAt.toISOString() });
  }
  return out;
}

/** The 404 of an editor video id that names none of the workspace's, naming `field`. */
export const notFoundVideo = (id: number, field = 'path.id') =>
  new ApiError('not_found', `Editor video ${id} was not found in this workspace`, { resource: 'editor_video', field });

async function loadProject(db: AppContext['db'] | Tx, orgId: string, id: number, lock = false, field?: string): Promise<ProjectRow> {
  const q = db
    .select()
    .from(editorVideos)
    .where(
      and(
        eq(
          editorVideos.videoId,
          rowId(editorVideos.videoId, id, () => notFoundVideo(id, field)),
        ),
        eq(editorVideos.orgId, orgId),
      ),
    );
  const [row] = lock ? await q.for('update') : await q;
  if (!row) throw notFoundVideo(id, field);
  return row;
}

/** Writes a changed project (the caller holds its row lock); returns the new row. */
async function saveProject(tx: Tx, row: ProjectRow, state: { title: string; timeline: Timeline }): Promise<ProjectRow> {
  const [updated] = await tx
    .update(editorVideos)
    .set({ title: state.title, timeline: state.timeline, version: row.version + 1, updatedAt: new Date() })
    .where(eq(editorVideos.videoId, row.videoId))
    .returning();
  return updated;
}

// ------------------------------------------------------------------------------ create/read

export async function createEditorVideo(ctx: AppContext, orgId: string, body: S['CreateEditorVideoRequest']): Promise<EditorVideoView> {
  const aspect = body.aspect_ratio ?? '9:16';
  let { width, height } = FRAME_SIZES[aspect];
  if ((body.width === undefined) !== (body.height === undefined)) {
    const missing = body.width === undefined ? 'width' : 'height';
    throw badRequest(`Invalid request: give both width and height, or neither (body.${missing} is missing)`, [
      { field: `body.${missing}`, message: 'is required when the other dimension is given' },
    ]);
  }
  if (body.width !== undefined && body.height !== undefined) {
    const [a, b] = aspect.split(':').map(Number);
    if (Math.abs(body.width / body.height - a / b) > 0.01 * (a / b)) {
      throw badRequest(`Invalid request: ${body.width}x${body.height} does not match the aspect ratio ${aspect}`, [
        { field: 'body.height', message: `does not match aspect_ratio ${aspect} with width ${body.width}` },
      ]);
    }
    width = body.width;
    height = body.height;
  }
  return ctx.db.transaction(async (tx) => {
    const [v] = await tx.insert(videos).values({ orgId, kind: 'editor' }).returning({ id: videos.id });
    const [row] = await tx
      .insert(editorVideos)
      .values({
        videoId: v.id,
        orgId,
        title: body.title ?? 'Untitled video',
        aspectRatio: aspect,
        width,
        height,
        fps: body.fps ?? 30,
        timeline: emptyTimeline(),
      })
      .returning();
    return projectView(row, []);
  });
}

interface ListCursor {
  c: string;
  i: number;
}
const isListCursor = (v: unknown): v is ListCursor =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as ListCursor).c === 'string' &&
  !Number.isNaN(Date.parse((v as ListCursor).c)) &&
  Number.isSafeInteger((v as ListCursor).i);

export async function listEditorVideos(
  ctx: AppContext,
  orgId: string,
  q: { limit?: number; cursor?: string },
): Promise<S['EditorVideoList']> {
  const limit = q.limit ?? 30;
  const cursor = decodeCursor(q.cursor, isListCursor);
  const where = [eq(editorVideos.orgId, orgId)];
  if (cursor) {
    const at = new Date(cursor.c);
    where.push(or(lt(editorVideos.createdAt, at), and(eq(editorVideos.createdAt, at), lt(editorVideos.videoId, cursor.i)))!);
  }
  const rows = await ctx.db
    .select()
    .from(editorVideos)
    .where(and(...where))
    .orderBy(desc(editorVideos.createdAt), desc(editorVideos.videoId))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const edits = await history(
    ctx.db,
    page.map((r) => r.videoId),
  );
  const last = page[page.length - 1];
  return {
    object: 'list',
    data: page.map((r) => projectView(r, edits.get(r.videoId) ?? [])),
    next_cursor: rows.length > limit && last ? encodeCursor({ c: last.createdAt.toISOString(), i: last.videoId } as never) : null,
  };
}

export async function getEditorVideo(ctx: AppContext, orgId: string, id: number): Promise<EditorVideoView> {
  const row = await loadProject(ctx.db, orgId, id);
  const edits = await history(ctx.db, [id]);
  return projectView(row, edits.get(id) ?? []);
}

/** GET /videos/{id}'s 404. */
export const videoNotFound = (id: number) =>
  new ApiError('not_found', `Video ${id} was not found in this workspace`, { resource: 'video', field: 'path.id' });

/** GET /videos/{id}: the status of any video of the shared id space. */
export async function getVideoStatus(ctx: AppContext, orgId: string, id: number): Promise<S['Video']> {
  const missing = () => videoNotFound(id);
  const [v] = await ctx.db
    .select({ kind: videos.kind, title: editorVideos.title, createdAt: videos.createdAt, updatedAt: editorVideos.updatedAt })
    .from(videos)
    .leftJoin(editorVideos, eq(editorVideos.videoId, videos.id))
    .where(and(eq(videos.id, rowId(videos.id, id, missing)), eq(videos.orgId, orgId)));
  if (v?.kind === 'faceless') {
    const faceless = await facelessStatus(ctx, orgId, id);
    if (faceless) return faceless;
  }
  if (v?.kind !== 'editor' || v.title === null) throw missing();
  return editorVideoStatus(id, v.title, v.createdAt, v.updatedAt);
}

/** An editor video as GET /videos/{id} and GET /videos show it: always ready. */
export function editorVideoStatus(id: number, title: string, createdAt: Date, updatedAt: Date | null): S['Video'] {
  return {
    object: 'video',
    id,
    kind: 'editor',
    status: 'ready',
    title,
    url: null,
    error: null,
    progress: 100,
    engines: null,
    scenes: null,
    created_at: createdAt.toISOString(),
    updated_at: (updatedAt ?? createdAt).toISOString(),
  };
}

// ------------------------------------------------------------------------------ edits

// Rows are read fresh for every change, so their timeline object is ours to change in place.
const stateOf = (row: ProjectRow, maxSeconds: number): ProjectState => ({
  title: row.title,
  timeline: row.timeline as Timeline,
  frame: { width: row.width, height: row.height },
  fps: row.fps,
  maxSeconds,
});

export async function applyEditorEdits(
  ctx: AppContext,
  orgId: string,
  id: number,
  body: S['ApplyEditorEditsRequest'],
  signal?: AbortSignal,
): Promise<S['EditorEditResult']> {
  const res = new EditResources(ctx, orgId, signal);
  let committed = false;
  try {
    if (body.operations.some((op) => EXTERNAL_OPS.has(op.type))) {
      // Slow work (speech, downloads, transcription) on a snapshot, outside the lock.
      const snapshot = await loadProject(ctx.db, orgId, id);
      if (body.expected_version === undefined || body.expected_version === snapshot.version) {
        await applyOperations(stateOf(snapshot, ctx.config.editorMaxTimelineSeconds), body.operations, res);
      }
    }
    const result = await ctx.db.transaction(async (tx) => {
      res.db = tx;
      const row = await loadProject(tx, orgId, id, true);
      if (body.expected_version !== undefined && body.expected_version !== row.version) {
        throw new ApiError(
          'bad_request',
          `The project is at version ${row.version}, not the expected_version ${body.expected_version}; read it again and redo the edit`,
          {
            field: 'body.expected_version',
            current_version: row.version,
            errors: [
              { field: 'body.expected_version', message: `is ${body.expected_version} but the project is at version ${row.version}` },
            ],
          },
        );
      }
      const state = stateOf(row, ctx.config.editorMaxTimelineSeconds);
      const applied = await applyOperations(state, body.operations, res);
      await res.commit(tx);
      const updated = await saveProject(tx, row, state);
      await tx.insert(editorEdits).values({
        videoId: id,
        orgId,
        version: updated.version,
        instructions: body.instructions ?? null,
        operations: body.operations,
        operationCount: body.operations.length,
      });
      const edits = await history(tx, [id]);
      return {
        object: 'editor_edit_result' as const,
        video: projectView(updated, edits.get(id) ?? []),
        applied_operations: applied,
        version: updated.version,
      };
    });
    committed = true;
    return result;
  } finally {
    await res.discard(committed);
  }
}

// ------------------------------------------------------------------------------ adding media

type Placement = Partial<S['EditorMediaPlacement']>;

/** Places library media on a project's timeline inside `tx` (row lock), bumping the version. */
async function placeOnProject(
  tx: Tx,
  orgId: string,
  videoId: number,
  m: MediaInfo,
  p: Placement & { audio_role?: S['AudioRole'] },
  field: (name: string) => string,
  videoField: string,
  maxSeconds: number,
): Promise<{ item: Item; track: Track; version: number }> {
  const row = await loadProject(tx, orgId, videoId, true, videoField);
  const state = stateOf(row, maxSeconds);
  let placed: { item: Item; track: Track };
  try {
    placed = placeMediaItem(state.timeline, m, p, field, maxSeconds);
  } catch (err) {
    if (err instanceof OpError) {
      const f = err.field;
      throw new ApiError(err.code, `Invalid request: ${f} ${err.message}`, {
        field: f,
        ...(err.resource ? { resource: err.resource } : {}),
        ...(err.code === 'bad_request' ? { errors: [{ field: f, message: err.message }] } : {}),
      });
    }
    throw err;
  }
  const updated = await saveProject(tx, row, state);
  return { ...placed, version: updated.version };
}

export async function addEditorMedia(
  ctx: AppContext,
  orgId: string,
  videoId: number,
  body: S['AddEditorMediaRequest'],
  signal?: AbortSignal,
): Promise<S['EditorMediaAddition']> {
  if ((body.media_id === undefined) === (body.url === undefined)) {
    throw badRequest('Invalid request: give exactly one of media_id and url', [
      { field: 'body.media_id', message: 'give exactly one of media_id and url' },
      { field: 'body.url', message: 'give exactly one of media_id and url' },
    ]);
  }
  const field = (name: string) => `body.${name}`;
  if (body.media_id) {
    const m = await findMedia(ctx.db, orgId, body.media_id);
    if (!m)
      throw new ApiError('not_found', `Media ${body.media_id} was not found in this workspace`, {
        resource: 'editor_media',
        field: 'body.media_id',
      });
    const out = await ctx.db.transaction((tx) =>
      placeOnProject(tx, orgId, videoId, mediaInfo(m), body, field, 'path.id', ctx.config.editorMaxTimelineSeconds),
    );
    return { object: 'editor_media_addition', video_id: videoId, item: out.item, track: out.track, version: out.version };
  }
  await loadProject(ctx.db, orgId, videoId); // 404 before any download
  const bytes = await fetchMedia(ctx, body.url!, 'body.url', signal);
  const { row } = await ingest(ctx, await receiveBuffer(ctx, bytes), {
    orgId,
    filename: body.filename ?? urlFilename(body.url!),
    mediaType: body.media_type,
    source: 'url',
    field: 'body.url',
  });
  try {
    const out = await ctx.db.transaction(async (tx) => {
      await insertMedia(tx, [row]);
      return placeOnProject(tx, orgId, videoId, mediaInfo(row), body, field, 'path.id', ctx.config.editorMaxTimelineSeconds);
    });
    return { object: 'editor_media_addition', video_id: videoId, item: out.item, track: out.track, version: out.version };
  } catch (err) {
    await discardStored(ctx, [row.storageKey]);
    throw err;
  }
}

export interface UploadTarget {
  add_to_editor?: boolean;
  video_id?: number;
  placement?: Placement;
}

/**
 * Checks the target project of an upload before any byte is stored (404 when absent). video_id
 * and placement apply only with add_to_editor: true; sent without it they are a 400 naming them.
 */
export async function checkUploadTarget(ctx: AppContext, orgId: string, t: UploadTarget): Promise<void> {
  if (!t.add_to_editor) {
    const stray = (['video_id', 'placement'] as const).filter((k) => t[k] !== undefined).map((k) => `body.${k}`);
    if (stray.length) {
      throw badRequest(
        `Invalid request: ${stray.join(' and ')} ${stray.length > 1 ? 'apply' : 'applies'} only with add_to_editor: true; send add_to_editor: true to place the upload on that editor video, or leave them out to only upload`,
        stray.map((field) => ({ field, message: 'applies only with add_to_editor: true' })),
      );
    }
    return;
  }
  if (t.video_id === undefined)
    throw badRequest('Invalid request: body.video_id is required with add_to_editor', [
      { field: 'body.video_id', message: 'is required when add_to_editor is true' },
    ]);
  await loadProject(ctx.db, orgId, t.video_id, false, 'body.video_id');
}

/** Inserts an ingested upload and, with add_to_editor, places it; one transaction. */
export async function commitUpload(
  ctx: AppContext,
  orgId: string,
  row: MediaInsert & { id: string },
  t: UploadTarget,
): Promise<S['EditorMediaUpload']> {
  try {
    return await ctx.db.transaction(async (tx) => {
      const [stored] = await insertMedia(tx, [row]);
      if (!t.add_to_editor)
        return { object: 'editor_media_upload' as const, media: mediaView(ctx, stored), editor_item: null, video_id: null, version: null };
      const out = await placeOnProject(
        tx,
        orgId,
        t.video_id!,
        mediaInfo(stored),
        t.placement ?? {},
        (n) => `body.placement.${n}`,
        'body.video_id',
        ctx.config.editorMaxTimelineSeconds,
      );
      return {
        object: 'editor_media_upload' as const,
        media: mediaView(ctx, stored),
        editor_item: out.item,
        video_id: t.video_id!,
        version: out.version,
      };
    });
  } catch (err) {
    await discardStored(ctx, [row.storageKey]);
    throw err;
  }
}
