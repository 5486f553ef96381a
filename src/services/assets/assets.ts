// Workspace assets (GET /assets): the org's brand kits, public and custom avatars, built-in
// and ready custom voices, and the reference template targets derived from the catalog.
import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { brandKits, customAvatars, customVoices } from '../../db/schema/index.ts';
import { builtInVoices, publicAvatars, referenceTemplateTargets } from '../catalog/catalog-data.ts';
import { previewBase } from '../catalog/catalog.ts';
import type { Storage } from '../../storage/index.ts';
import { avatarView, brandKitView } from './workspace-assets.ts';

export async function workspaceAssets(db: Db, orgId: string, publicBaseUrl: string, storage: Storage) {
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
    brand_kits: kits.map((k) => brandKitView(storage, k)),
    avatars: [...publicAvatars(base), ...avatars.map((a) => avatarView(storage, a))],
    voices: [
      ...builtInVoices(base),
      ...voices.map((v) => ({
        id: v.id,
        name: v.name,
        preview_url: v.sampleKey ? storage.signedUrl(v.sampleKey) : v.previewUrl,
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
