// Worker threads on Node 20 do not inherit tsx's module hooks for dynamic imports, so each
// worker registers tsx itself before loading the TypeScript task module it is given.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
const module = await import(workerData.taskModule);
export default module.default;
