// The admin CLI (`npm run -s admin -- …`; the commands are in admin-commands.ts). Start-up shortcuts
// first, as in src/main.ts: a module's static imports load before its code runs, so the commands are
// imported only after Node's compile cache and the drizzle resolution shortcut are in place.
import module from 'node:module';
import { registerFastResolve } from '../boot/fast-resolve.ts';

module.enableCompileCache?.();
registerFastResolve();
const { main } = await import('./admin-commands.ts');
await main();
