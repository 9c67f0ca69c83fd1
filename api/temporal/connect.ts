import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config.ts';
import { startDevServer, type DevServer } from './dev-server.ts';

export interface TemporalHandle {
  address: string;
  client: Client;
  close(): Promise<void>;
}

/** Joins TEMPORAL_ADDRESS when set; otherwise starts the embedded dev server and joins it. */
export async function connectTemporal(config: Config): Promise<TemporalHandle> {
  let devServer: DevServer | undefined;
  let address = config.temporal.address;
  if (!address) {
    devServer = await startDevServer({
      cliPath: config.temporal.cliPath,
      dataDir: config.dataDir,
      port: config.temporal.devPort,
      namespace: config.temporal.namespace,
    });
    address = devServer.address;
  }
  const connection = await Connection.connect({ address });
  return {
    address,
    client: new Client({ connection, namespace: config.temporal.namespace }),
    async close() {
      await connection.close();
      await devServer?.stop();
    },
  };
}
