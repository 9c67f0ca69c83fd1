export { createSvcGlobal, svcGlobal, DEFAULT_OPTIONS, type SvcGlobalOptions } from './model.ts';
