// What the refuse-*.mjs files share: loading any file of the given packages (their folders as
// package-lock.json names them, `node_modules/<name>`) throws, and the process says which. Both
// module systems are watched: ESM through a resolve hook, CommonJS through Module._resolveFilename
// (Node 20's hooks miss require()).
import Module, { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `what` names the kind of package in the error: "a development package". */
export function refusePackages(packages, what) {
  register('./refuse-packages-hook.mjs', import.meta.url, { data: { root: ROOT, packages, what } });
  const original = Module._resolveFilename;
  const packageOf = (file) => path.relative(ROOT, file).match(/^node_modules\/(?:@[^/]+\/)?[^/]+(?:\/node_modules\/(?:@[^/]+\/)?[^/]+)*/)?.[0];
  const refused = new Set(packages);
  Module._resolveFilename = function (request, parent, ...rest) {
    const file = original.call(this, request, parent, ...rest);
    const owner = path.isAbsolute(file) ? packageOf(file) : undefined;
    if (owner && refused.has(owner)) throw new Error(`${what} was loaded at run time: ${owner} (require('${request}') from ${parent?.filename})`);
    return file;
  };
}
