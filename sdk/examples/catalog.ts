// The catalog: templates (static, video and UGC ads) and AI models with their prices in credits.
//   MEDIA_API_BASE_URL=… MEDIA_API_KEY=… node sdk/examples/catalog.ts
import { listModels } from '../src/index.ts';
import { connect, runIfMain } from './connect.ts';

export async function catalog() {
  const client = connect();
  // Without throwOnError, a call resolves to { data, error, response }: exactly one of data and error is set.
  const { data, error, response } = await listModels({ client });
  if (error) throw new Error(`GET /models failed with ${response.status} ${error.error.code}: ${error.error.message}`);
  return {
    static_ads: data.static_ads.length,
    video_ads: data.video_ads.length,
    ugc_ads: data.ugc_ads.length,
    ai_models: data.ai_models.length,
    // The cheapest static-ad template, to use in a generation.
    cheapest_static_ad: data.static_ads
      .filter((t) => t.credits !== null)
      .sort((a, b) => (a.credits ?? 0) - (b.credits ?? 0))
      .map((t) => ({ slug: t.slug, title: t.title, credits: t.credits }))[0],
  };
}

runIfMain(import.meta, catalog);
