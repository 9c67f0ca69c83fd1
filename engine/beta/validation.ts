import type { z } from 'zod';
import { fieldPath, RequestError, type FieldError } from '../errors.ts';
import { BetaQuery } from './query-schema.ts';

/** Where the query part's fields sit in error paths: the multipart body's `query` part. */
export const QUERY_PATH = 'body.query';

type Issue = z.core.$ZodIssue;

/** A union branch that failed on the value's JSON type (or an enum's value), not inside it. */
const failedAtItsRoot = (branch: Issue[]) =>
  branch.length === 1 && branch[0].path.length === 0 && (branch[0].code === 'invalid_type' || branch[0].code === 'invalid_value');

/**
 * zod reports a failed union as one opaque "invalid_union". When exactly one branch accepted the
 * value's shape (a role that is an object with kind "target", say), its own issues are the useful
 * ones (`columns.sales.aggregate`); otherwise the union's message lists the accepted forms.
 */
function flatten(issues: readonly Issue[], prefix: PropertyKey[] = []): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const candidates = issue.errors.filter((branch) => !failedAtItsRoot(branch));
      if (candidates.length === 1 && candidates[0].some((i) => i.path.length > 0 || i.code === 'invalid_union')) return flatten(candidates[0], path);
    }
    return [{ path, message: issue.message }];
  });
}

/** Validates the `query` part; every failing field is named in the reference's path form. */
export function parseBetaQuery(value: unknown): BetaQuery {
  const result = BetaQuery.safeParse(value);
  if (result.success) return result.data;
  const byPath = new Map<string, string[]>();
  for (const { path, message } of flatten(result.error.issues)) {
    const at = fieldPath(QUERY_PATH, path);
    byPath.set(at, [...(byPath.get(at) ?? []), message]);
  }
  const errors: FieldError[] = [...byPath].map(([path, messages]) => ({ path, message: [...new Set(messages)].join('; ') }));
  throw new RequestError(422, 'invalid_request', `the query part failed validation (${errors.length} field${errors.length === 1 ? '' : 's'})`, errors);
}
