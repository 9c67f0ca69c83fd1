/**
 * The settings of `models install` (models/install/): where reference checkpoints are downloaded
 * from and to. Part of config.ts, the one place the environment is read.
 */
import os from 'node:os';
import path from 'node:path';
import type { Environment } from './setting-file.ts';

export interface ModelInstallConfig {
  /** HF_ENDPOINT: the Hugging Face Hub, or a mirror of it, that `--from-hub` downloads from (default https://huggingface.co). */
  hubEndpoint: string;
  /** HF_TOKEN: sent to the Hub as a bearer token, for gated or private repositories; null sends none. */
  hubToken: string | null;
  /**
   * MODEL_DOWNLOADS_DIR: where checkpoints are downloaded before the export; an interrupted
   * download resumes from here (default XDG_CACHE_HOME, else ~/.cache, then forecasting-service/downloads).
   */
  downloadsDir: string;
}

export function modelInstallConfig(env: Environment): ModelInstallConfig {
  const endpoint = env.HF_ENDPOINT?.trim() || 'https://huggingface.co';
  let parsed: URL;
  try {
    parsed = new URL(endpoint);
  } catch {
    throw new Error(`HF_ENDPOINT must be an http(s) URL such as https://huggingface.co; got '${endpoint}'`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`HF_ENDPOINT must be an http(s) URL; got '${endpoint}'`);
  const cache = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return {
    hubEndpoint: endpoint.replace(/\/+$/, ''),
    hubToken: env.HF_TOKEN?.trim() || null,
    downloadsDir: path.resolve(env.MODEL_DOWNLOADS_DIR || path.join(cache, 'forecasting-service', 'downloads')),
  };
}
