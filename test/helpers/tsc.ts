// TypeScript 7's native `tsc` executable (package `typescript7`, an alias of typescript@7), found the
// way its own bin script finds it. Run directly: its bin script is an ES module without an extension,
// which the require hooks tap installs in test processes' children cannot load.
export async function tsc7(): Promise<string> {
  const { default: getExePath } = (await import(new URL('../../node_modules/typescript7/lib/getExePath.js', import.meta.url).href)) as {
    default: () => string;
  };
  return getExePath();
}
