// Loaded with `node --import` ahead of a built entry point: loading any file of a package that
// `npm install --omit=dev` leaves out (marked "dev" in package-lock.json: TypeScript, tsx, esbuild,
// the test tools) throws, and the process says which.
import fs from 'node:fs';
import path from 'node:path';
import { refusePackages, ROOT } from './refuse-packages.mjs';

const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
refusePackages(
  Object.keys(lock.packages).filter((key) => lock.packages[key].dev),
  'a development package',
);
