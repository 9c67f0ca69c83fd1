import { Client, Connection, isGrpcServiceError, ServiceError } from '@temporalio/client';
import type { WorkerOptions } from '../activities/job-worker.ts';
import type { Config, TemporalConfig } from '../config.ts';
import { startDevServer, type DevServer } from './temporal-dev-server.ts';
import { connectionOptions, probeTemporal } from './temporal-connection.ts';

export interface TemporalHandle {
  client: Client;
  close(): Promise<void>;
}

/** The gRPC status codes a first call's failure is told apart by. */
const NOT_FOUND = 5;
const PERMISSION_DENIED = 7;
const UNAUTHENTICATED = 16;

/** A gRPC failure of the first calls as a sentence naming the setting at fault. */
function explainCallFailure(temporal: TemporalConfig, error: Error): string {
  const grpc = error instanceof ServiceError ? error.cause : error;
  const at = `Temporal at ${temporal.target}`;
  const namespace = `TEMPORAL_NAMESPACE=${temporal.namespace}`;
  switch (isGrpcServiceError(grpc) ? grpc.code : undefined) {
    case NOT_FOUND:
      return `${at} has no namespace '${temporal.namespace}' (${namespace}): ${error.message}`;
    case UNAUTHENTICATED:
      return temporal.apiKey
        ? `${at} refused TEMPORAL_API_KEY (${error.message}): is it current, and for this account?`
        : `${at} wants credentials (${error.message}): set TEMPORAL_API_KEY, or TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY`;
    case PERMISSION_DENIED:
      return `${at} denied access to ${namespace} (${error.message}): check what TEMPORAL_API_KEY or the client certificate may use`;
    default:
      return `${at} failed its first call (${error.message}): check TEMPORAL_ADDRESS and the TEMPORAL_TLS_* settings`;
  }
}

/** Connects a client and checks, with one call, that the namespace exists and the credentials may use it. */
async function connectClient(temporal: TemporalConfig): Promise<Connection> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect(connectionOptions(temporal));
    await connection.workflowService.describeNamespace({ namespace: temporal.namespace });
    return connection;
  } catch (error) {
    await connection?.close();
    throw new Error(explainCallFailure(temporal, error as Error));
  }
}

/**
 * Checks that this process can use the cluster at TEMPORAL_ADDRESS: the connection (TLS and the
 * client certificate, by a probe that names what is wrong), then the namespace and credentials.
 * Errors say which setting is at fault; the entry points print them as `Cannot start: ...`.
 */
export async function checkTemporal(temporal: TemporalConfig): Promise<void> {
  if (temporal.address) await probeTemporal(temporal);
  await (await connectClient(temporal)).close();
}

/** Joins TEMPORAL_ADDRESS when set (checked first); otherwise starts the embedded dev server and joins it. */
export async function connectTemporal(config: Config): Promise<TemporalHandle> {
  let devServer: DevServer | undefined;
  if (config.temporal.address) {
    await probeTemporal(config.temporal);
  } else {
    devServer = await startDevServer({
      cliPath: config.temporal.cliPath,
      dataDir: config.dataDir,
      port: config.temporal.devPort,
      uiPort: config.temporal.uiPort,
      namespace: config.temporal.namespace,
    });
  }
  const connection = await connectClient(config.temporal).catch(async (error: Error) => {
    await devServer?.stop();
    throw error;
  });
  return {
    client: new Client({ connection, namespace: config.temporal.namespace }),
    async close() {
      await connection.close();
      await devServer?.stop();
    },
  };
}

/** How a job worker of this deployment connects and what it works on (`npm start`'s in-process one and `npm run worker`). */
export function jobWorkerOptions(config: Config): WorkerOptions {
  const { address, tls, apiKey } = connectionOptions(config.temporal);
  return {
    address,
    tls,
    ...(apiKey ? { apiKey } : {}),
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    forecastsPerChunk: config.jobs.forecastsPerChunk,
    webhookHosts: config.schedules.webhookHosts,
    shutdownGraceMs: config.shutdownGraceMs,
  };
}
