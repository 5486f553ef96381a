// Loaded before every test file (package.json `tap.node-arg`):
// - the start-up shortcut the service's own entry points take (src/boot/fast-resolve.ts);
// - no source-map reading: tap turns it on for every test process, and with Node's type stripping
//   our line numbers are already the files' own, so it only parsed every dependency's maps;
// - processes a test starts (servers, workers, the CLI) run as users run them: tap's process-info
//   recorder (for coverage, which this suite turns off) hooks every spawn to load itself into each
//   child through NODE_OPTIONS, which cost each of them about half a second of CPU at start-up.
import processOnSpawn from 'process-on-spawn';
import { registerFastResolve } from '../../src/boot/fast-resolve.ts';

registerFastResolve();
process.setSourceMapsEnabled(false);
processOnSpawn.removeAllListeners();
