// Generations (static ads, video ads, UGC ads, AI model outputs): one pipeline on two queues,
// images and video renders.
import { definePipeline } from '../types.ts';
import { handlers } from './handlers.ts';
import { imageGenerationJob, videoGenerationJob } from './job.ts';

export const pipeline = definePipeline({ name: 'generation', handlers, jobs: [imageGenerationJob, videoGenerationJob] });
