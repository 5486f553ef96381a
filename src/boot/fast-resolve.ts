// Module resolution without Node's slow path for drizzle-orm. For every `.js` file it resolves, Node
// 24 reads the package's scope config, and in doing so JSON-parses that package's whole `exports`
// map again (internal/modules/package_json_reader.js spreads an object whose `exports` getter
// parses it). drizzle-orm's package.json is 180 KB and ~110 of its modules load at start-up: about
// half a second of CPU in every process. Its ESM files import each other only by relative `.js`
// paths inside a `"type": "module"` package, so those resolve to plain URLs of format `module`; and
// the bare `drizzle-orm…` specifiers our own files import resolve once per process, not once per file.
import module from 'node:module';

const DRIZZLE = '/node_modules/drizzle-orm/';
const bare = new Map<string, module.ResolveFnOutput>();

export function registerFastResolve(): void {
  module.registerHooks?.({
    resolve(specifier, context, nextResolve) {
      const parent = context.parentURL;
      if (
        parent?.includes(DRIZZLE) &&
        parent.endsWith('.js') &&
        (specifier.startsWith('./') || specifier.startsWith('../')) &&
        specifier.endsWith('.js')
      ) {
        return { url: new URL(specifier, parent).href, format: 'module', shortCircuit: true };
      }
      if (specifier === 'drizzle-orm' || specifier.startsWith('drizzle-orm/')) {
        const key = `${specifier}|${context.conditions.join(',')}`;
        let hit = bare.get(key);
        if (!hit) bare.set(key, (hit = nextResolve(specifier, context)));
        return { ...hit, shortCircuit: true };
      }
      return nextResolve(specifier, context);
    },
  });
}
