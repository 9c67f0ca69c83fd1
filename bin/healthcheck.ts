/**
 * The container image's HEALTHCHECK: exits 0 when this container's process answers GET /healthz,
 * the API on PORT or a worker on WORKER_METRICS_PORT, and 1 otherwise. It reads the settings of
 * the process it checks, so it needs no argument naming the role.
 */
import { loadConfigOrStop } from './start-up.ts';

/** Below the image's HEALTHCHECK timeout, so a hung process is reported, not the check killed. */
const ANSWER_WITHIN_MS = 3_000;

const config = loadConfigOrStop();
// A process listening on every address answers on loopback.
const host = ['0.0.0.0', '::'].includes(config.host) ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
const ports = [config.port, config.temporal.workerMetricsPort].filter((port) => port > 0);
const answers = (port: number) =>
  fetch(`http://${host}:${port}/healthz`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) }).then(
    (response) => response.ok,
    () => false,
  );
const healthy = (await Promise.all(ports.map(answers))).some(Boolean);
process.exit(healthy ? 0 : 1);
