// The ESM half of refuse-dev-packages.mjs: a resolve hook, run off the main thread by Node.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root;
let dev;

export function initialize(data) {
  root = data.root;
  dev = new Set(data.devPackages);
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.startsWith('file:')) {
    const owner = path.relative(root, fileURLToPath(resolved.url)).match(/^node_modules\/(?:@[^/]+\/)?[^/]+(?:\/node_modules\/(?:@[^/]+\/)?[^/]+)*/)?.[0];
    if (owner && dev.has(owner)) throw new Error(`a development package was loaded at run time: ${owner} (import '${specifier}' from ${context.parentURL})`);
  }
  return resolved;
}
