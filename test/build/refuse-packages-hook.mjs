// The ESM half of refuse-packages.mjs: a resolve hook, run off the main thread by Node.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root;
let refused;
let what;

export function initialize(data) {
  root = data.root;
  refused = new Set(data.packages);
  what = data.what;
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.startsWith('file:')) {
    const owner = path.relative(root, fileURLToPath(resolved.url)).match(/^node_modules\/(?:@[^/]+\/)?[^/]+(?:\/node_modules\/(?:@[^/]+\/)?[^/]+)*/)?.[0];
    if (owner && refused.has(owner)) throw new Error(`${what} was loaded at run time: ${owner} (import '${specifier}' from ${context.parentURL})`);
  }
  return resolved;
}
