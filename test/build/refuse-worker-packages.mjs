// Loaded with `node --import` ahead of an API process that runs no worker (RUN_WORKER=false):
// loading the Temporal SDK's worker, or the webpack it bundles workflows with, throws, and the
// process says from where. Only a worker needs them, and they are slow to load.
import { refusePackages } from './refuse-packages.mjs';

refusePackages(['node_modules/@temporalio/worker', 'node_modules/webpack'], 'a package only a job worker needs');
