// Loaded before every test file (package.json `tap.node-arg`): the start-up shortcuts the service's
// own entry points take (src/boot/fast-resolve.ts), and no source-map reading — tap turns it on for
// every test process, and with Node's type stripping our line numbers are already the files' own, so
// it only parsed the maps of every dependency at each start.
import { registerFastResolve } from '../../src/boot/fast-resolve.ts';

registerFastResolve();
process.setSourceMapsEnabled(false);
