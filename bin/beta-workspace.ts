import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ActivityDependencies } from '../activities/forecast-job.ts';
import type { Config } from '../config.ts';
import { openProcessBetaDatabase } from '../engine/beta/beta-database.ts';

/**
 * What a process needs for beta work, opened once and shared by its routes and its job worker:
 * one DuckDB database (one memory limit for the process), and a local folder where a worker
 * plans beta jobs (their parts fetched from the store, their chunk inputs before upload).
 */
export async function openBetaWorkspace(config: Config): Promise<{ jobs: ActivityDependencies['beta']; close(): void }> {
  const database = await openProcessBetaDatabase(config.dataDir, { memoryLimit: config.beta.duckdbMemoryLimit, initSql: config.beta.duckdbInitSql });
  const workDir = path.join(config.dataDir, 'beta-job-work', `${os.hostname()}-${process.pid}`);
  return {
    jobs: { db: database.db, locator: config.beta, workDir },
    close() {
      database.close();
      fs.rmSync(workDir, { recursive: true, force: true });
    },
  };
}
