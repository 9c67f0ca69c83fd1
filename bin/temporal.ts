import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config.ts';
import { startDevServer, type DevServer } from './temporal-dev-server.ts';

export interface TemporalHandle {
  client: Client;
  close(): Promise<void>;
}

/** Joins TEMPORAL_ADDRESS when set; otherwise starts the embedded dev server and joins it. */
export async function connectTemporal(config: Config): Promise<TemporalHandle> {
  let devServer: DevServer | undefined;
  if (!config.temporal.address) {
    devServer = await startDevServer({
      cliPath: config.temporal.cliPath,
      dataDir: config.dataDir,
      port: config.temporal.devPort,
      uiPort: config.temporal.uiPort,
      namespace: config.temporal.namespace,
    });
  }
  const connection = await Connection.connect({ address: config.temporal.target });
  return {
    client: new Client({ connection, namespace: config.temporal.namespace }),
    async close() {
      await connection.close();
      await devServer?.stop();
    },
  };
}
