// Loaded with `node --import` ahead of a built entry point: loading any file of a package that
// `npm install --omit=dev` leaves out (marked "dev" in package-lock.json: TypeScript, tsx, esbuild,
// the test tools) throws, and the process says which. Both module systems are watched: ESM through
// a resolve hook, CommonJS through Module._resolveFilename (Node 20's hooks miss require()).
import fs from 'node:fs';
import Module, { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
const devPackages = Object.keys(lock.packages).filter((key) => lock.packages[key].dev);

register('./refuse-dev-packages-hook.mjs', import.meta.url, { data: { root, devPackages } });

const original = Module._resolveFilename;
const packageOf = (file) => path.relative(root, file).match(/^node_modules\/(?:@[^/]+\/)?[^/]+(?:\/node_modules\/(?:@[^/]+\/)?[^/]+)*/)?.[0];
const dev = new Set(devPackages);
Module._resolveFilename = function (request, parent, ...rest) {
  const file = original.call(this, request, parent, ...rest);
  const owner = path.isAbsolute(file) ? packageOf(file) : undefined;
  if (owner && dev.has(owner)) throw new Error(`a development package was loaded at run time: ${owner} (require('${request}') from ${parent?.filename})`);
  return file;
};
