/**
 * GET /metrics (and GET /healthz) of a standalone worker (`npm run worker`), which has no API of
 * its own: its chunk durations, fit times and model-thread queue are recorded in this process,
 * so Prometheus must scrape it here. A bare node:http server, since it answers two fixed paths.
 */
import { createServer, type Server } from 'node:http';
import { registry } from '../telemetry/prometheus-metrics.ts';

export async function serveWorkerMetrics(port: number, host: string): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(request.method === 'HEAD' ? undefined : text),
        (err: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${err.message}\n`),
      );
    } else if (path === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: this worker serves GET /metrics and GET /healthz\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
