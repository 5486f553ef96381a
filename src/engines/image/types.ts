// The image capability: pictures, asked for in three shapes, each a registry entry of its own
// (../index.ts), because no engine draws all three today:
//   image  a generation's picture (static ad, image AI-model output): a GenerationJob in, one file
//          out (../generation.ts). Engines: the local renderer (../local/ads.ts), and Replicate,
//          fal and OpenAI Images (../hosted/) for an AI model variant whose catalog entry names
//          one of them when that provider's key is configured;
//   scene  a faceless video's scene still, JPEG at the video's size: the local scene renderer
//          (../local/scene.ts), which draws it or lays its decoration over a given (stock) photo;
//   slide  a slideshow's slide, PNG at the frame's size and without text (the words are editor
//          text items): the local slide renderer (../local/slide.ts), which draws it around a
//          given product photo or image model's picture.
// A slide's or scene's picture from an AI image model of the catalog is ./model-picture.ts.
import type { components } from '../../../generated/openapi.d.ts';
import type { Provider } from '../generation.ts';

type S = components['schemas'];

/** Makes a generation's picture (see Provider in ../generation.ts). */
export type ImageEngine = Provider;

// ---------------------------------------------------------------------------------------------
// scene

/** The request's style names (POST /faceless-videos image_style, selected_ai_styles, selected_flux_dev_styles). */
export type ImageStyle = S['FacelessImageStyle'];
export type AiStyle = S['FacelessAiStyle'];
export type FluxStyle = S['FacelessFluxDevStyle'];

export interface SceneInput {
  width: number;
  height: number;
  /** 0-based index of the scene and how many there are. */
  index: number;
  count: number;
  /** Seed of the layout (the video id and the scene's text). */
  seed: string;
  /** The scene's on-screen title (2–6 words; "03 · Real fizz" for a list item), its big type; a sentence is shortened to a phrase of it. */
  text?: string;
  style: ImageStyle;
  aiStyles: readonly AiStyle[];
  fluxStyles: readonly FluxStyle[];
  /** logo: PNG, JPEG or WebP bytes drawn at the top right. */
  brand?: { name: string; colors: string[]; logo?: Buffer };
  /** PNG, JPEG or WebP bytes of the customer's reference image: it fills the frame behind the big type. */
  reference?: Buffer;
  /**
   * PNG, JPEG or WebP bytes of a photo that fills the frame (cover-cropped about its centre) in
   * place of the style's drawing (a stock photo, a model's picture): graded, with the caption
   * scrim and the brand over it, without the big type.
   */
  photo?: Buffer;
  /** Pixel cap of the decoded photo (MEDIA_MAX_PIXELS); default 40 000 000. */
  maxInputPixels?: number;
  /** Top of the caption band (fraction of the height): kept dark for legible captions. */
  captionTop: number;
  /**
   * Without the caption scrim and the brand (faceless videos: the timeline lays renderOverlay's
   * picture over every scene, so the brand stays put while the scenes pan).
   */
  plain?: boolean;
}

/** What the caption scrim and the brand are drawn from (the scene's, without what is particular to one scene). */
export type OverlayInput = Pick<SceneInput, 'width' | 'height' | 'style' | 'brand' | 'captionTop'>;

/** A text a scene still or overlay has: what it says, its box on the picture (pixels), its role and fill colours. */
export interface SceneText {
  text: string;
  box: { x: number; y: number; w: number; h: number };
  role: string;
  color?: string;
  colors?: string[];
}

export interface SceneEngine {
  readonly name: string;
  /** The scene's still (JPEG bytes at width × height) and the texts drawn on it, where and in which colours (for the quality checker). */
  renderScene(input: SceneInput): Promise<{ jpeg: Buffer; texts: SceneText[] }>;
  /** The caption scrim and the brand alone, as a still draws them, on a transparent PNG at width × height (laid over clips). */
  renderOverlay(input: OverlayInput): Promise<Buffer>;
}

// ---------------------------------------------------------------------------------------------
// slide

export type SlideLayout = 'card' | 'full-bleed';

export interface SlidePalette {
  background: string;
  secondary: string;
  accent: string;
}

export interface SlideInput {
  width: number;
  height: number;
  /** 0-based position and the number of slides (progress dots). */
  index: number;
  count: number;
  layout: SlideLayout;
  palette: SlidePalette;
  /** Encoded image bytes (PNG, JPEG, WebP or SVG for built-in portraits). */
  product?: Buffer;
  /**
   * The slide's picture made by an image model (SLIDESHOW_IMAGE_MODEL; PNG, JPEG or WebP bytes):
   * shown where the product would be (the card's slot, or the whole slide in the full-bleed
   * layout), in its place.
   */
  picture?: Buffer;
  avatar?: Buffer;
  logo?: Buffer;
  /** Pixel cap of decoded inputs (MEDIA_MAX_PIXELS). */
  maxInputPixels?: number;
  /** Varies the decoration per slideshow. */
  seed: string;
}

/** An input the renderer could not use: which one and why (a job failure that is not retried). */
export class SlideInputError extends Error {
  readonly input: 'product' | 'picture' | 'avatar' | 'logo';
  constructor(input: SlideInputError['input'], message: string) {
    super(message);
    this.name = 'SlideInputError';
    this.input = input;
  }
}

export interface SlideEngine {
  readonly name: string;
  /** The slide: PNG bytes at width × height. */
  renderSlide(input: SlideInput): Promise<Buffer>;
}
