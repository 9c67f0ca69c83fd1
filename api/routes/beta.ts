import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { openBetaDatabase } from '../../engine/beta/duckdb.ts';
import type { LocatorConfig } from '../../engine/beta/locator.ts';
import { BetaQuery } from '../../engine/beta/query-schema.ts';
import { checkBetaQueryAgainstModel, runBetaForecast } from '../../engine/beta/run.ts';
import type { Engine } from '../../engine/engine.ts';
import { requireRunnableModel } from '../../engine/model-checks.ts';
import { resolveSources } from '../beta/sources.ts';
import { newUploadDir, receiveUpload, removeStaleUploads, removeUpload } from '../beta/upload.ts';
import { BETA_ROOTS, HttpError } from '../problem.ts';
import { BetaModelQuery } from '../query-schemas.ts';
import { parseOr422 } from '../validation.ts';

export interface BetaRouteOptions {
  dataDir: string;
  maxUploadBytes: number;
  locator: LocatorConfig;
  duckdbMemoryLimit: string | null;
  duckdbInitSql: string | null;
  engine: Engine;
}

const NOT_MULTIPART =
  'send multipart/form-data: a part named "query" (application/json) holding the beta request, and one part per data file (Parquet or Arrow IPC)';

/**
 * POST /v1-beta/forecast (reference 4.6): an encapsulated plugin, so its multipart parser and
 * its own content-type rules apply to this route only.
 */
export async function betaRoutes(app: FastifyInstance, opts: BetaRouteOptions): Promise<void> {
  // Any body reaches the handler unparsed, which answers a clear 415 unless it is multipart.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  await app.register(multipart);

  // DATA_DIR may be shared by several processes (README, scale-out): each keeps its DuckDB spill
  // files in a directory of its own, and only clearly abandoned uploads are swept at start-up.
  await removeStaleUploads(opts.dataDir);
  const spill = path.join(opts.dataDir, 'beta-duckdb-tmp', `${os.hostname()}-${process.pid}`);
  const db = await openBetaDatabase({ tempDirectory: spill, memoryLimit: opts.duckdbMemoryLimit, initSql: opts.duckdbInitSql });
  app.addHook('onClose', async () => {
    db.closeSync();
    fs.rmSync(spill, { recursive: true, force: true });
  });

  app.post('/v1-beta/forecast', { config: { fieldRoots: BETA_ROOTS } }, async (request, reply) => {
    const { model } = parseOr422(BetaModelQuery, request.query, 'query');
    requireRunnableModel(model, opts.engine.settings.models);
    if (!request.isMultipart()) throw new HttpError(415, 'unsupported_media_type', NOT_MULTIPART);
    const dir = newUploadDir(opts.dataDir);
    try {
      const started = performance.now();
      const upload = await receiveUpload(request, { dir, maxBytes: opts.maxUploadBytes });
      const uploadMs = performance.now() - started;
      if (upload.query === undefined)
        throw new HttpError(422, 'invalid_request', `no "query" part: ${NOT_MULTIPART}`, [{ path: 'body.query', message: 'required' }]);
      const query = parseOr422(BetaQuery, upload.query, 'body.query');
      checkBetaQueryAgainstModel(query, model, opts.engine.settings.models);
      const sources = await resolveSources(query, upload, opts.locator);
      const { body, timings } = await runBetaForecast(opts.engine, db, query, model, sources);
      // Where the time went, for clients and the benchmark (parsing and schema logic vs model).
      reply.header(
        'server-timing',
        `upload;dur=${uploadMs.toFixed(1)}, schema;dur=${timings.schemaMs.toFixed(1)}, model;dur=${timings.modelMs.toFixed(1)}, assemble;dur=${timings.assembleMs.toFixed(1)}`,
      );
      return body;
    } finally {
      await removeUpload(dir);
    }
  });
}
