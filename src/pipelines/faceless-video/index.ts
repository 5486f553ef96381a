// Faceless videos: script, scenes, voiceover, captions and render.
import { definePipeline } from '../types.ts';
import { handlers } from './handlers.ts';
import { facelessJob } from './job.ts';

export const pipeline = definePipeline({ name: 'faceless-video', handlers, jobs: [facelessJob] });
