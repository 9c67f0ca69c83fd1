import { closeWorkerPool } from '../engine/worker-pool.ts';
import { loadConfig } from './config.ts';
import { buildServer } from './server.ts';

const config = loadConfig();
const app = await buildServer(config, { logger: true });
await app.listen({ port: config.port, host: config.host });

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    app.log.info(`${signal}: shutting down`);
    await app.close();
    await closeWorkerPool();
    process.exit(0);
  });
}
