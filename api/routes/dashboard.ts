import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { jobResultRoutes } from '../dashboard/result-routes.ts';
import type { JobService } from '../jobs/job-service.ts';

/**
 * The dashboard at `/`: static files (bundled by `npm run build`, or into DATA_DIR at a start from
 * the sources), public like /openapi since the page itself asks for the API key and sends it with
 * every API call; and, where the server runs jobs, the JSON views of a job's results it reads
 * (documented in /openapi).
 */
export async function dashboardRoutes(app: FastifyInstance, opts: { dataDir: string; jobs?: JobService }): Promise<void> {
  const root = await dashboardFolder(opts.dataDir);
  await app.register(async (files) => {
    // Every route the static plugin adds in this scope is public: no API key for the page itself.
    files.addHook('onRoute', (route) => {
      route.config = { ...route.config, public: true };
    });
    await files.register(fastifyStatic, {
      root,
      // One route per built file, so every other path keeps the API's own 404 and 405 answers.
      wildcard: false,
      index: 'index.html',
      dotfiles: 'ignore',
      // The files change with each deployment and carry no hash: browsers revalidate (ETag).
      cacheControl: false,
      setHeaders: (response) => response.setHeader('cache-control', 'no-cache'),
    });
  });
  if (opts.jobs) await app.register(jobResultRoutes, { jobs: opts.jobs });
}

/**
 * Built, the server serves the bundle the build put beside it, and loads no bundler. From the
 * sources, it bundles web/ now with esbuild, a development tool.
 */
async function dashboardFolder(dataDir: string): Promise<string> {
  if (!import.meta.url.endsWith('.ts')) return fileURLToPath(new URL('../../web', import.meta.url));
  const { buildDashboard } = await import('../dashboard/build.ts');
  return buildDashboard(dataDir);
}
