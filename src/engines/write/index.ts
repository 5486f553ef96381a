// The copy writer the faceless-video and slideshow jobs use: the OpenAI-compatible adapter when
// SCRIPT_PROVIDER_URL is set, else the local writer.
import type { WriterConfig } from '../../config.ts';
import { createLocalWriter } from './local.ts';
import { createOpenAICompatibleWriter } from './openai-compatible.ts';
import type { Writer } from './types.ts';

export { supportedWriterLanguage } from './languages.ts';
export { countWords } from './local.ts';
export * from './types.ts';

export function createWriter(config: WriterConfig): Writer {
  return config.url ? createOpenAICompatibleWriter({ ...config, url: config.url }) : createLocalWriter();
}
