// Editor exports: a timeline rendered to MP4.
import { definePipeline } from '../types.ts';
import { handlers } from './handlers.ts';
import { editorExportJob } from './job.ts';

export const pipeline = definePipeline({ name: 'editor-export', handlers, jobs: [editorExportJob] });
