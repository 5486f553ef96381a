// Pixel limits of the images and video frames users supply (MEDIA_MAX_PIXELS,
// MEDIA_MAX_DIMENSION in src/config.ts). A small compressed file can declare an enormous frame
// (a 758 KiB PNG of 16000×16000); decoding it costs gigabytes. Headers are checked against
// these limits before anything decodes the pixels, and sharp is given `limitInputPixels` too.

export interface PixelLimits {
  /** Most pixels (width × height) of one image or frame. */
  maxPixels: number;
  /** Most pixels per side. */
  maxDimension: number;
}

/** The defaults of src/config.ts, for callers without a configuration (tests, tools). */
export const DEFAULT_PIXEL_LIMITS: PixelLimits = { maxPixels: 40_000_000, maxDimension: 16384 };

/** Why a width × height frame is over the limits (a phrase to follow the field name), or null. */
export function pixelProblem(width: number, height: number, limits: PixelLimits): string | null {
  if (width > limits.maxDimension || height > limits.maxDimension) {
    return `is ${width}×${height} pixels; at most ${limits.maxDimension} pixels per side are accepted`;
  }
  if (width * height > limits.maxPixels) {
    return `is ${width}×${height} pixels (${width * height}); at most ${limits.maxPixels} pixels are accepted`;
  }
  return null;
}

/** Context of a 400 for a frame over the limits. */
export const pixelLimitContext = (limits: PixelLimits) => ({ limit_pixels: limits.maxPixels, limit_dimension: limits.maxDimension });
