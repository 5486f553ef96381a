// Slideshows: copy, slide images, editor project and carousel MP4.
import { definePipeline } from '../types.ts';
import { handlers } from './handlers.ts';
import { slideshowJob } from './job.ts';

export const pipeline = definePipeline({ name: 'slideshow', handlers, jobs: [slideshowJob] });
