// Workspace assets (GET /assets): the org's brand kits, public and custom avatars, built-in
// and ready custom voices, and the reference template targets derived from the catalog.
import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { brandKits, customAvatars, customVoices } from '../../db/schema/index.ts';
import { builtInVoices, publicAvatars, referenceTemplateTargets } from '../catalog/catalog-data.ts';
import { previewBase } from '../catalog/catalog.ts';

export async function workspaceAssets(db: Db, orgId: string, publicBaseUrl: string) {
  const base = previewBase(publicBaseUrl);
  const [kits, avatars, voices] = await Promise.all([
    db.select().from(brandKits).where(eq(brandKits.orgId, orgId)).orderBy(asc(brandKits.id)),
    db.select().from(customAvatars).where(eq(customAvatars.orgId, orgId)).orderBy(asc(customAvatars.createdAt)),
    db
      .select()
      .from(customVoices)
      .where(and(eq(customVoices.orgId, orgId), eq(customVoices.status, 'ready')))
      .orderBy(asc(customVoices.createdAt)),
  ]);
  return {
    object: 'workspace_assets' as const,
    brand_kits: kits.map((k) => ({
      id: k.id,
      brand_id: k.brandId,
      kit_name: k.kitName,
      kit_data: k.kitData as Record<string, unknown>,
      training_status: k.trainingStatus,
      created_at: k.createdAt.toISOString(),
      updated_at: k.updatedAt.toISOString(),
    })),
    avatars: [
      ...publicAvatars(base),
      ...avatars.map((a) => ({ id: a.id, name: a.name, imageUrl: a.imageUrl, videoUrl: a.videoUrl, isCustom: true })),
    ],
    voices: [
      ...builtInVoices(base),
      ...voices.map((v) => ({
        id: v.id,
        name: v.name,
        preview_url: v.previewUrl,
        source: 'custom_clone' as const,
        locale: v.locale,
        credits_9_16: v.credits916,
        credits_16_9: v.credits169,
        gender: v.gender,
        age: v.age,
        style_tags: v.styleTags,
        recommendation_summary: v.recommendationSummary,
      })),
    ],
    reference_template_targets: referenceTemplateTargets(),
  };
}
