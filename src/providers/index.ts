// Entry point of the providers: the interface, the dimension helper and the provider chosen by
// configuration (see ProviderConfig in src/config.ts and the README's table).
import type { ProviderConfig } from '../config.ts';
import type { PixelLimits } from '../media/limits.ts';
import { LocalProvider } from './local.ts';
import { RemoteProvider } from './remote.ts';
import type { Provider } from './types.ts';

export { LocalProvider } from './local.ts';
export { RemoteProvider, type RemoteProviderOptions } from './remote.ts';
export * from './types.ts';

/** The provider chosen by configuration (GENERATION_PROVIDER and REMOTE_PROVIDER_*, read in src/config.ts). */
export function createProvider(cfg: ProviderConfig, limits?: PixelLimits): Provider {
  if (cfg.kind === 'remote') {
    return new RemoteProvider({
      baseUrl: cfg.remoteUrl!,
      apiKey: cfg.remoteApiKey!,
      pollMs: cfg.remotePollMs,
      requestTimeoutMs: cfg.remoteRequestTimeoutMs,
      jobTimeoutMs: cfg.remoteJobTimeoutMs,
      pixelLimits: limits,
    });
  }
  return new LocalProvider();
}
