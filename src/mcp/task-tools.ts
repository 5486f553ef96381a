// The six tools whose calls become MCP tasks (./tasks.ts) and how each one's work is followed: the
// records its call queued, how each is read and how it ends, and the final result. Data for the
// tool list too (./tools.ts lists these tools with `execution.taskSupport`).
import type { AppContext } from '../context.ts';
import { getReference } from '../services/references/references.ts';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => x !== null && typeof x === 'object' && !Array.isArray(x);
const str = (x: unknown) => (typeof x === 'string' ? x : undefined);

/** Where a task's work stands. `failed` is work that ended in failure (a tool result with isError). */
export type TaskPhase = 'working' | 'completed' | 'failed' | 'cancelled';

/** How a task tool's work is followed: its records, how each reads and ends, and its final result. */
export interface TaskTool {
  /** The read tool of one record (its view and media links), or … */
  get?: string;
  /** … where no tool reads one record, how it is read: its view, undefined when the workspace has none. */
  read?(ctx: AppContext, orgId: string, args: Obj): Promise<Obj | undefined>;
  /** The read tool's arguments of each record the call queued, from the call's result. */
  records(created: Obj): Obj[];
  /** A record's phase, from its view. */
  phase(view: Obj): TaskPhase;
  /** The final result's structured content, from the call's result and the records' views (it fits the tool's outputSchema). */
  final(created: Obj, views: Obj[]): Obj;
  /** The final result's `status` is the record's (listed with the read tool's status schema). */
  recordStatus?: boolean;
}

const byStatus =
  (working: string[], completed: string[], failed: string[]) =>
  (view: Obj): TaskPhase => {
    const s = str(view.status) ?? '';
    if (working.includes(s)) return 'working';
    if (completed.includes(s)) return 'completed';
    if (failed.includes(s)) return 'failed';
    return s === 'canceled' ? 'cancelled' : 'working';
  };

/** The record itself is the call's result (reference inspirations, exports, publications): the final result is its view. */
const theRecord = (_created: Obj, [view]: Obj[]) => view;

/**
 * A publication is working while any account's post is queued or publishing; it failed when every
 * post failed; otherwise it is done (a partial publication is a result, its failed posts in it).
 */
function publicationPhase(view: Obj): TaskPhase {
  const posts = (Array.isArray(view.results) ? view.results : []).filter(isObj);
  if (posts.some((p) => p.status === 'queued' || p.status === 'publishing')) return 'working';
  if (posts.length > 0 && posts.every((p) => p.status === 'canceled')) return 'cancelled';
  if (posts.length > 0 && posts.every((p) => p.status === 'failed')) return 'failed';
  return view.status === 'queued' ? 'working' : 'completed';
}

export const TASK_TOOLS: ReadonlyMap<string, TaskTool> = new Map<string, TaskTool>([
  [
    'create_generation',
    {
      get: 'get_generation',
      records: (c) => (Array.isArray(c.generations) ? c.generations.filter(isObj).map((g) => ({ id: g.id })) : []),
      phase: byStatus(['generating'], ['completed'], ['error']),
      // The batch as answered, each generation as it ended.
      final: (c, views) => ({ ...c, generations: views }),
    },
  ],
  [
    'create_slideshow',
    {
      get: 'get_slideshow',
      records: (c) => [{ id: c.slideshow_id }],
      phase: byStatus(['queued', 'generating'], ['completed'], ['error']),
      final: (c, [view]) => ({ ...c, status: view.status, slideshow: view }),
      recordStatus: true,
    },
  ],
  [
    'create_faceless_video',
    {
      get: 'get_video',
      records: (c) => [{ id: c.video_id }],
      phase: byStatus(['queued', 'generating'], ['completed', 'ready'], ['error']),
      final: (c, [view]) => ({ ...c, status: view.status, video: view }),
      recordStatus: true,
    },
  ],
  [
    'create_reference_inspiration',
    {
      read: (ctx, orgId, args) => getReference(ctx, orgId, String(args.id)),
      records: (c) => [{ id: c.id }],
      phase: byStatus(['processing'], ['ready', 'rejected'], ['failed']),
      final: theRecord,
    },
  ],
  [
    'export_editor_video',
    {
      get: 'get_editor_video_export',
      records: (c) => [{ id: c.video_id, export_id: c.id }],
      phase: byStatus(['queued', 'rendering'], ['completed'], ['failed']),
      final: theRecord,
    },
  ],
  ['publish_media_to_social', { get: 'get_social_publication', records: (c) => [{ id: c.id }], phase: publicationPhase, final: theRecord }],
]);
