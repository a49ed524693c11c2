// Module hooks (node:module register) for a suite file's process: an import of uvu's main module
// (`'uvu'`, or any specifier that resolves to the same file) from anywhere but guarded-uvu.ts itself
// resolves to guarded-uvu.ts, so every suite reports what it throws through the guard. 'uvu/assert'
// and the other subpaths are untouched.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const guarded = new URL('./guarded-uvu.ts', import.meta.url).href;
// The file an ESM import of 'uvu' loads (its "import" export; the loader's thread has no
// import.meta.resolve on Node 20): dist/index.mjs beside the dist/index.js require() finds.
const realUvu = pathToFileURL(
  createRequire(import.meta.url)
    .resolve('uvu')
    .replace(/\.js$/, '.mjs'),
).href;

interface ResolveContext {
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>;

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve) {
  if (context.parentURL === guarded) return next(specifier, context);
  // A suite outside the project (the runner's own tests write some to a temporary directory) finds no
  // node_modules to resolve 'uvu' from.
  if (specifier === 'uvu') return { url: guarded, shortCircuit: true };
  const resolved = await next(specifier, context);
  return resolved.url === realUvu ? { ...resolved, url: guarded } : resolved;
}
