import type { AddressInfo } from 'node:net';
import { testConfig } from '../api/helpers.ts';
import { startJobsStack, type JobsStack } from '../jobs/temporal-env.ts';

export { KEY } from '../api/helpers.ts';

export interface ContractServer {
  /** Where it answers, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  stop(): Promise<void>;
}

/**
 * The service as `npm start` runs it, on a real port for tools outside this process: the API with
 * jobs, a real Temporal dev server and a job worker, with the job store in a temporary DATA_DIR.
 * Settings differ from the defaults in two ways, both about limits tested elsewhere
 * (test/api/rate-limit.test.ts, test/api/limits*.test.ts) that would otherwise answer most of a
 * generated run with 429 and leave the operations behind them untested: no rate limit, and no
 * limit on failed authentications per address (every request here comes from one address, and
 * schemathesis sends wrong keys on purpose).
 */
export async function startContractServer(taskQueue: string): Promise<ContractServer> {
  const config = testConfig({ authFailures: { limit: 0, windowMs: 60_000 } });
  const stack: JobsStack = await startJobsStack(config, taskQueue, 2);
  await stack.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = stack.app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, stop: () => stack.stop() };
}
