// Social publications: one job per target account.
import { definePipeline } from '../types.ts';
import { handlers } from './handlers.ts';
import { socialPublishJob } from './job.ts';

export const pipeline = definePipeline({ name: 'social-publication', handlers, jobs: [socialPublishJob] });
