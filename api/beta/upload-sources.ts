import { arrowSource } from '../../engine/beta/arrow-source.ts';
import { locatorSource, type LocatorConfig } from '../../engine/beta/locator.ts';
import type { BetaQuery, Source } from '../../engine/beta/query-fields.ts';
import { parquetSource, type BetaSources, type TableSource } from '../../engine/beta/table-sources.ts';
import { invalidRequest, refuseField, requestField, type FieldError, type FieldPath } from '../../engine/errors.ts';
import { detectFormat } from './file-format.ts';
import type { StoredBetaSources, StoredSource } from '../../store/layout.ts';
import type { Upload } from './upload.ts';

/**
 * Matches the query's sources with the upload (reference 4.6, rules 1-3): `inline://<name>`
 * resolves by part name, never by file name; a URI naming a part that was not sent and a part
 * that no URI reads are both errors, reported together. Locator strings go to the locator rules.
 */

const INLINE = 'inline://';

interface Reference {
  source: Source;
  /** Where the source sits in the query, for error paths. */
  path: FieldPath;
}

function references(query: BetaQuery): Reference[] {
  return [
    { source: query.input.source, path: ['input', 'source'] },
    ...(query.covariates ?? []).map((cov, i) => ({ source: cov.schema.source, path: ['covariates', i, 'schema', 'source'] })),
  ];
}

function missingPart(name: string, upload: Upload): string {
  const sent = [...upload.parts.keys()];
  const byFile = [...upload.parts.values()].find((p) => p.filename === name || p.name === name.replace(/\.[A-Za-z0-9]+$/, ''));
  const hint = byFile ? ` A URI names the part, not its file: did you mean ${INLINE}${byFile.name}?` : '';
  return `the query reads part '${name}' (${INLINE}${name}), but no part of that name was uploaded; parts uploaded: ${sent.length ? sent.map((s) => `'${s}'`).join(', ') : 'none'}.${hint}`;
}

export async function resolveSources(query: BetaQuery, upload: Upload, locator: LocatorConfig): Promise<BetaSources> {
  const errors: FieldError[] = [];
  const read = new Set<string>();
  const refs = references(query);
  for (const ref of refs) {
    if (typeof ref.source === 'string') continue;
    const name = ref.source.uri.slice(INLINE.length);
    read.add(name);
    if (!upload.parts.has(name)) errors.push(requestField([...ref.path, 'uri'], missingPart(name, upload)));
  }
  for (const name of upload.parts.keys()) {
    if (!read.has(name))
      errors.push({
        root: 'upload',
        path: [name],
        message: `part '${name}' was uploaded but the query does not read it; name it in an ${INLINE}${name} URI, or leave it out`,
      });
  }
  if (errors.length > 0) throw invalidRequest(errors.length === 1 ? errors[0].message : 'the query and the uploaded parts do not match', errors);

  const resolved: TableSource[] = [];
  for (const ref of refs) {
    if (typeof ref.source === 'string') {
      resolved.push(locatorSource(ref.source, locator, { root: 'request', path: ref.path }));
      continue;
    }
    const part = upload.parts.get(ref.source.uri.slice(INLINE.length))!;
    const label = `part '${part.name}'`;
    const where = { root: 'upload', path: [part.name] } as const;
    const detected = await detectFormat(part.file);
    if (detected.format === null) throw refuseField(where, `${label} is neither Parquet nor Arrow IPC: ${detected.reason}`);
    resolved.push(detected.format === 'parquet' ? parquetSource(label, where, [part.file]) : arrowSource(label, where, part.file));
  }
  const [input, ...covariates] = resolved;
  return { input, covariates };
}

/**
 * Where a beta job's sources are once stored: each uploaded part by its position in the upload
 * (its file is `upload.parts` in that order), each locator as given.
 */
export async function storedSources(query: BetaQuery, upload: Upload): Promise<StoredBetaSources> {
  const names = [...upload.parts.keys()];
  const store = async (source: Source): Promise<StoredSource> => {
    if (typeof source === 'string') return { locator: source };
    const name = source.uri.slice(INLINE.length);
    const detected = await detectFormat(upload.parts.get(name)!.file);
    return { part: names.indexOf(name), name, format: detected.format === 'parquet' ? 'parquet' : 'arrow' };
  };
  return { input: await store(query.input.source), covariates: await Promise.all((query.covariates ?? []).map((c) => store(c.schema.source))) };
}
