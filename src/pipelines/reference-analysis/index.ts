// Reference inspirations: the charged save and the analysis of their media.
import { definePipeline } from '../types.ts';
import { handlers } from './handlers.ts';
import { referenceAnalysisJob } from './job.ts';

export const pipeline = definePipeline({ name: 'reference-analysis', handlers, jobs: [referenceAnalysisJob] });
