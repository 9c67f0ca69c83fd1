/**
 * `MODELS_DIR/<name>/install.json`: where an installed model's weights came from, written by
 * `models install` beside the manifest (whose schema is strict, and which the export writes) and
 * read by `models list`. The service does not read it. docs/decisions/078-install-record.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

export const INSTALL_RECORD_FILE = 'install.json';

const HubSource = z.object({
  kind: z.literal('hub'),
  endpoint: z.string(),
  repo: z.string(),
  revision: z.string(),
  commit: z.string(),
  files: z.array(z.object({ path: z.string(), bytes: z.number(), sha256: z.string().nullable(), git_oid: z.string() })),
});
const CheckpointSource = z.object({ kind: z.literal('checkpoint'), path: z.string() });

const InstallRecord = z.object({
  format: z.literal(1),
  model: z.string(),
  installed_at: z.string(),
  source: z.discriminatedUnion('kind', [HubSource, CheckpointSource]),
  /** The requirements file of tools/export/ whose environment exported it. */
  export_environment: z.string(),
});
export type InstallRecord = z.output<typeof InstallRecord>;
export type InstallSource = InstallRecord['source'];

export function writeInstallRecord(folder: string, record: InstallRecord): void {
  fs.writeFileSync(path.join(folder, INSTALL_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

/** The record of an installed folder; null when there is none or it cannot be read (a model exported by hand). */
export function readInstallRecord(folder: string): InstallRecord | null {
  try {
    const parsed = InstallRecord.safeParse(JSON.parse(fs.readFileSync(path.join(folder, INSTALL_RECORD_FILE), 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** `hub amazon/chronos-2@main (0123456789ab)`, or `checkpoint /path`: for `models list`. */
export function describeSource(source: InstallSource, defaultEndpoint: string): string {
  if (source.kind === 'checkpoint') return `checkpoint ${source.path}`;
  const where = source.endpoint === defaultEndpoint ? '' : ` via ${source.endpoint}`;
  const commit = source.revision === source.commit ? '' : ` (${source.commit.slice(0, 12)})`;
  return `hub ${source.repo}@${source.revision}${commit}${where}`;
}
