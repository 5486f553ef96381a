// The render capability: one editor timeline (tracks, items and the local files of the media they
// use) → one H.264/AAC MP4. Engine: ffmpeg (./ffmpeg.ts), chosen by the registry (../index.ts).
import type { components } from '../../../generated/openapi.d.ts';

type S = components['schemas'];

export interface RenderMedia {
  /** A copy of the media in the render's work folder. */
  path: string;
  /** Its sniffed type (the media row's content type): the demuxer it is read with. */
  type: string;
  kind: 'image' | 'video' | 'audio' | 'voice';
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
  hasAudio: boolean | null;
}

export interface RenderProject {
  width: number;
  height: number;
  fps: number;
  tracks: S['EditorTrack'][];
  items: S['EditorItem'][];
  /** Local files of the media the items use, by media id. */
  media: Map<string, RenderMedia>;
}

export type RenderQuality = 'draft' | 'standard' | 'high';

export interface RenderOptions {
  quality?: RenderQuality;
  signal?: AbortSignal;
  /** Called with non-decreasing fractions in 0..1 while the render runs. */
  onProgress?: (fraction: number) => void;
}

export interface RenderEngine {
  readonly name: string;
  /** Renders `project` into `outPath` (an .mp4), using `workDir` (which holds the media copies) for intermediates. */
  render(project: RenderProject, workDir: string, outPath: string, opts?: RenderOptions): Promise<void>;
}
