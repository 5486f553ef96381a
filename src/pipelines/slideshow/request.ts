// POST /slideshows, resolved: the request (already schema-valid) checked against the workspace,
// priced from the catalog's slideshow rule, and turned into the spec the slideshow job renders.
// Inapplicable combinations and private URLs are 400s naming the field; brand kits, avatars and
// references the workspace does not have are 404s naming it. It runs as the charged command's
// `prepare`, after the idempotency key: a replay never gets here, and nothing is charged when it throws.
// createSlideshow: the charged command itself (the slideshow row, its editor project and its job
// in one transaction).
import type { components } from '../../../generated/openapi.d.ts';
import { referenceInspirations } from '../../db/schema/index.ts';
import { ApiError, badRequest, type FieldError } from '../../errors.ts';
import type { GuardedFetcher } from '../../net/guarded-fetch.ts';
import { supportedWriterLanguage } from '../../engines/write/languages.ts';
import { PACKS } from '../../engines/write/languages.ts';
import type { Priced } from '../../services/billing/charged-command.ts';
import type { Tx } from '../../db/client.ts';
import { findPublicAvatar, slideshowCredits } from '../../services/catalog/catalog-data.ts';
import { FRAME_SIZES } from '../../services/editor/model.ts';
import { useAsset } from '../../services/assets/asset-use.ts';
import { brandColors } from '../../services/assets/brand-colors.ts';
import { SLIDESHOW_FPS, type SlideshowGeneration } from './rows.ts';
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { editorVideos, slideshows, videos } from '../../db/schema/index.ts';
import { slideshowJob } from './job.ts';
import { keyedRequest, runChargedCommand } from '../../services/billing/charged-command.ts';
import { emptyTimeline } from '../../services/editor/model.ts';

export type CreateSlideshowBody = components['schemas']['CreateSlideshowRequest'];
export type SlideshowAspect = NonNullable<CreateSlideshowBody['aspect_ratio']>;

/** The avatar a slideshow features: a catalog portrait (a file we ship) or an image URL (fetched by the job). */
export type SlideshowAvatar =
  | { source: 'catalog'; id: string; name: string; image: string }
  | {
      source: 'custom';
      id: string;
      name: string;
      imageUrl: string /** An uploaded avatar's portrait in storage (read by the job, not fetched). */;
      imageKey?: string;
    }
  | { source: 'url'; imageUrl: string };

/** Everything the job needs; stored with the slideshow (slideshows.spec). */
export interface SlideshowSpec {
  prompt: string;
  title: string;
  language: string;
  productContext?: string;
  slideCount: number;
  aspectRatio: SlideshowAspect;
  width: number;
  height: number;
  generateTextOverlays: boolean;
  productImageUrls: string[];
  avatar?: SlideshowAvatar;
  brandKit?: {
    id: number;
    name: string;
    colors: string[];
    logoUrl?: string /** An uploaded logo in storage (read by the job). */;
    logoKey?: string;
    fonts: string[];
  };
  reference?: { id: string; templateSlug: string; mediaIds: string[] };
}

export interface ResolvedSlideshow extends Priced {
  spec: SlideshowSpec;
}

/** What the editor's text style accepts as a font family name. */
const FONT_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]*$/;

/** A title from the prompt when none is given: its first sentence, cut at a word near 60 characters. */
export function titleFromPrompt(prompt: string): string {
  const flat = prompt.replace(/\s+/g, ' ').trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(flat)?.[1] ?? flat;
  let title = sentence.replace(/[.!?]+$/, '');
  if (title.length > 60) {
    const cut = title.slice(0, 60);
    const space = cut.lastIndexOf(' ');
    title = `${(space > 30 ? cut.slice(0, space) : cut).replace(/[\s,;:–-]+$/, '')}…`;
  }
  return title || 'Slideshow';
}

/** The kit's colours (#RRGGBB, upper case, first = background), logo URL and fonts, from its free-form data. */
export function brandKitLook(kitData: unknown): { colors: string[]; logoUrl?: string; fonts: string[] } {
  const data = (kitData ?? {}) as Record<string, unknown>;
  const colors = brandColors(kitData);
  const logo = [data.logo_url, data.logo].find((v): v is string => typeof v === 'string' && /^https?:\/\//i.test(v));
  const rawFonts = Array.isArray(data.fonts) ? data.fonts : typeof data.fonts === 'object' && data.fonts ? Object.values(data.fonts) : [];
  const fonts = rawFonts
    .map((f) =>
      typeof f === 'string'
        ? f
        : typeof f === 'object' && f && typeof (f as { family?: unknown }).family === 'string'
          ? (f as { family: string }).family
          : undefined,
    )
    .filter((f): f is string => typeof f === 'string' && f.length <= 100 && FONT_NAME.test(f));
  return { colors, logoUrl: logo, fonts };
}

export interface ResolveDeps {
  db: Tx;
  fetcher: GuardedFetcher;
  /** The local writer writes the languages it has phrases for; a remote model takes any. */
  localWriter: boolean;
}

export async function resolveSlideshow(deps: ResolveDeps, orgId: string, body: CreateSlideshowBody): Promise<ResolvedSlideshow> {
  const problems: FieldError[] = [];
  const add = (field: string, message: string) => problems.push({ field: `body.${field}`, message });
  const prompt = body.prompt.trim();
  if (!prompt) add('prompt', 'must contain more than white space');
  if (body.avatar_id !== undefined && body.avatar_image_url !== undefined) {
    add('avatar_image_url', 'is used instead of avatar_id; give one of them');
  }
  (body.product_image_urls ?? []).forEach((u, i) => {
    const problem = deps.fetcher.precheck(u);
    if (problem) add(`product_image_urls[${i}]`, problem);
  });
  if (body.avatar_image_url !== undefined) {
    const problem = deps.fetcher.precheck(body.avatar_image_url);
    if (problem) add('avatar_image_url', problem);
  }
  if (body.product_image_urls && body.product_image_urls.length > 10) add('product_image_urls', 'has more than 10 items');
  if (deps.localWriter && body.language !== undefined && !supportedWriterLanguage(body.language)) {
    add(
      'language',
      `is not a language this server writes (one of: ${Object.values(PACKS)
        .map((p) => p.name)
        .join(', ')}, by name or code)`,
    );
  }
  if (problems.length) throw badRequest(`Invalid request: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);

  const slideCount = body.slide_count ?? 6;
  const aspectRatio: SlideshowAspect = body.aspect_ratio ?? '4:5';
  const { width, height } = FRAME_SIZES[aspectRatio];
  const spec: SlideshowSpec = {
    prompt,
    title: body.title?.trim() || titleFromPrompt(prompt),
    language: body.language?.trim() || 'English',
    ...(body.product_context?.trim() ? { productContext: body.product_context.trim() } : {}),
    slideCount,
    aspectRatio,
    width,
    height,
    generateTextOverlays: body.generate_text_overlays ?? false,
    productImageUrls: body.product_image_urls ?? [],
  };

  // Workspace resources: 404 naming the field when the workspace does not have them; the assets
  // the job reads stay locked against a delete until the charge commits (useAsset).
  const db = deps.db;
  if (body.brand_kit_id !== undefined) {
    const kit = await useAsset(db, 'brandKit', orgId, body.brand_kit_id);
    if (!kit)
      throw new ApiError('not_found', `Brand kit ${body.brand_kit_id} was not found in this workspace`, {
        field: 'body.brand_kit_id',
        resource: 'brand_kit',
      });
    spec.brandKit = { id: kit.id, name: kit.kitName, ...brandKitLook(kit.kitData), ...(kit.logoKey ? { logoKey: kit.logoKey } : {}) };
  }
  if (body.avatar_id !== undefined) {
    const pub = findPublicAvatar(body.avatar_id);
    if (pub) spec.avatar = { source: 'catalog', id: pub.id, name: pub.name, image: pub.image };
    else {
      const custom = await useAsset(db, 'avatar', orgId, body.avatar_id);
      if (!custom)
        throw new ApiError('not_found', `Avatar ${body.avatar_id} was not found in this workspace`, {
          field: 'body.avatar_id',
          resource: 'avatar',
        });
      spec.avatar = {
        source: 'custom',
        id: custom.id,
        name: custom.name,
        imageUrl: custom.imageUrl,
        ...(custom.imageKey ? { imageKey: custom.imageKey } : {}),
      };
    }
  } else if (body.avatar_image_url !== undefined) {
    spec.avatar = { source: 'url', imageUrl: body.avatar_image_url };
  }
  if (body.custom_reference_inspiration_id !== undefined) {
    const id = body.custom_reference_inspiration_id;
    const [ref] = await db
      .select()
      .from(referenceInspirations)
      .where(and(eq(referenceInspirations.id, id), eq(referenceInspirations.orgId, orgId)));
    if (!ref) {
      throw new ApiError('not_found', `Reference ${id} was not found in this workspace`, {
        field: 'body.custom_reference_inspiration_id',
        resource: 'reference_inspiration',
      });
    }
    if (ref.status !== 'ready') {
      throw badRequest(`Reference ${ref.id} is ${ref.status}; only a ready reference can be used`, [
        { field: 'body.custom_reference_inspiration_id', message: `is ${ref.status}, not ready` },
      ]);
    }
    spec.reference = { id: ref.id, templateSlug: ref.templateSlug, mediaIds: ref.mediaIds };
  }
  return { spec, units: 1, unitCredits: slideshowCredits(slideCount) };
}

/** POST /slideshows: one slideshow, priced per slide, its editor project created at once. */
export function createSlideshow(
  ctx: AppContext,
  orgId: string,
  body: CreateSlideshowBody,
  headerKey: string | undefined,
): Promise<SlideshowGeneration> {
  return runChargedCommand<ResolvedSlideshow, SlideshowGeneration>(ctx, {
    orgId,
    operation: 'createSlideshow',
    ...keyedRequest(body, headerKey),
    ledger: { reason: 'slideshow_charge', reference: (_groupId, [slideshowId]) => `slideshow:${slideshowId}` },
    prepare: (tx) => resolveSlideshow({ db: tx, fetcher: ctx.fetcher, localWriter: !ctx.config.writer.url }, orgId, body),
    enqueue: async (sp, plan) => {
      const spec = plan.spec;
      // The editor project: an integer id of the shared video id space, ready (empty) at once.
      const [v] = await sp.insert(videos).values({ orgId, kind: 'editor' }).returning({ id: videos.id });
      await sp.insert(editorVideos).values({
        videoId: v.id,
        orgId,
        title: spec.title,
        aspectRatio: spec.aspectRatio,
        width: spec.width,
        height: spec.height,
        fps: SLIDESHOW_FPS,
        timeline: emptyTimeline(),
      });
      const id = randomUUID();
      const jobId = randomUUID();
      await sp.insert(slideshows).values({
        id,
        orgId,
        videoId: v.id,
        title: spec.title,
        slideCount: spec.slideCount,
        aspectRatio: spec.aspectRatio,
        spec,
        credits: plan.unitCredits,
        jobId,
      });
      await ctx.queue.sendInTx(sp, slideshowJob, { slideshowId: id }, jobId);
      return id;
    },
    respond: async (tx, plan, outcome) => {
      const [row] = await tx
        .select({ id: slideshows.id, videoId: slideshows.videoId })
        .from(slideshows)
        .where(eq(slideshows.id, outcome.unitIds[0]));
      return {
        object: 'slideshow_generation',
        status: 'queued',
        slideshow_id: row.id,
        video_id: row.videoId,
        title: plan.spec.title,
        slide_count: plan.spec.slideCount,
        credits_deducted: outcome.creditsDeducted,
        remaining_credits: outcome.remainingCredits,
      };
    },
  });
}
