import type { z } from 'zod';
import { fieldPath, HttpError, type ProblemField } from './problem.ts';

/** Where validated input sits in the HTTP request, and how a refusal names it. */
const WHAT = { body: 'request body', query: 'query', path: 'path', 'body.query': 'query part' } as const;

type Issue = z.core.$ZodIssue;

/** A union branch that failed on the value's JSON type (or an enum's value), not inside it. */
const failedAtItsRoot = (branch: Issue[]) =>
  branch.length === 1 && branch[0].path.length === 0 && (branch[0].code === 'invalid_type' || branch[0].code === 'invalid_value');

/**
 * zod reports a failed union as one opaque "invalid_union". When exactly one branch accepted the
 * value's shape (a beta role that is an object with kind "target", say), its own issues are the
 * useful ones (`columns.sales.aggregate`); otherwise the union's message lists the accepted forms.
 */
function flatten(issues: readonly Issue[], prefix: PropertyKey[] = []): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    // Each unknown property at its own path (`query.series_index`), so that the client sees which one.
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ path: [...path, key], message: `Unrecognized key: "${key}"` }));
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const candidates = issue.errors.filter((branch) => !failedAtItsRoot(branch));
      if (candidates.length === 1 && candidates[0].some((i) => i.path.length > 0 || i.code === 'invalid_union')) return flatten(candidates[0], path);
    }
    return [{ path, message: issue.message }];
  });
}

/**
 * Validates `value` with a zod schema, or refuses it with 422 `invalid_request` and one error per
 * failing field, its path in the reference's form under `root` (`body`, `query`, `path`, or the
 * beta's `body.query`).
 */
export function parseOr422<S extends z.ZodType>(schema: S, value: unknown, root: keyof typeof WHAT): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const byPath = new Map<string, string[]>();
  for (const { path, message } of flatten(result.error.issues)) {
    const at = fieldPath(root, path as (string | number)[]);
    byPath.set(at, [...(byPath.get(at) ?? []), message]);
  }
  const errors: ProblemField[] = [...byPath].map(([path, messages]) => ({ path, message: [...new Set(messages)].join('; ') }));
  throw new HttpError(422, 'invalid_request', `the ${WHAT[root]} failed validation (${errors.length} field${errors.length === 1 ? '' : 's'})`, errors);
}
