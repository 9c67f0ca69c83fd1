// Worker threads on Node 20 do not inherit tsx's module hooks for dynamic imports, so a thread
// given a TypeScript task module (run from the sources) registers tsx itself before loading it.
// A build (`npm run build`) gives it JavaScript, and tsx, a development tool, is never loaded.
import { workerData } from 'node:worker_threads';

if (workerData.taskModule.endsWith('.ts')) (await import('tsx/esm/api')).register();
const module = await import(workerData.taskModule);
export default module.default;
