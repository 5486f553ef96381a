// Start-up check of the image models the pipelines are configured with (SLIDESHOW_IMAGE_MODEL,
// FACELESS_IMAGE_MODEL): each must be an AI model of the catalog that makes images; and of the
// video model (FACELESS_VIDEO_MODEL): an AI model of the catalog that makes videos from an image
// or from text. src/config.ts
// reads the slugs but cannot read the catalog (it is below it), so the service checks them here
// before it starts anything: a wrong slug refuses boot with a message naming the variable,
// instead of slideshows and faceless videos quietly drawn without it.
import type { Config } from '../config.ts';
import { imageModelProblem } from '../engines/image/model-picture.ts';
import { videoModelProblem } from '../engines/video/model-clip.ts';
import { findAiModel } from '../services/catalog/catalog-data.ts';

/** The configuration names an image model the catalog has not, or one that makes no images. */
export class ImageModelConfigError extends Error {
  override name = 'ImageModelConfigError';
}

/** Throws ImageModelConfigError naming the first variable whose model the catalog cannot use. */
export function checkImageModels(
  config: Pick<Config, 'slideshowImageModel' | 'facelessImageModel'> & Partial<Pick<Config, 'facelessVideoModel'>>,
): void {
  const named = [
    ['SLIDESHOW_IMAGE_MODEL', config.slideshowImageModel],
    ['FACELESS_IMAGE_MODEL', config.facelessImageModel],
  ] as const;
  for (const [variable, slug] of named) {
    if (!slug) continue;
    const problem = imageModelProblem(variable, slug, findAiModel(slug));
    if (problem) throw new ImageModelConfigError(problem);
  }
  if (config.facelessVideoModel) {
    const problem = videoModelProblem('FACELESS_VIDEO_MODEL', config.facelessVideoModel, findAiModel(config.facelessVideoModel));
    if (problem) throw new ImageModelConfigError(problem);
  }
}
