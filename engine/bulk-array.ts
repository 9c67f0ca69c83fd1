import { z } from 'zod';

/**
 * An array schema for the large arrays of a request (targets, index entries), where zod's
 * per-element parsing (for a target value a union, a transform and a refinement) would hold the
 * event loop for every value. Arrays that `acceptAll`
 * takes (every value one the element schema passes unchanged; checked in one plain loop) are
 * taken as they are; otherwise the element schema runs, so every bad value is reported with its
 * own path and message exactly as `z.array(element)` does. The OpenAPI document shows
 * `z.array(element)`.
 */
export function bulkArray<E extends z.ZodType>(element: E, acceptAll: (values: unknown[]) => boolean, minItems = 0) {
  const full = minItems > 0 ? z.array(element).min(minItems) : z.array(element);
  const rendered = z.toJSONSchema(full, { io: 'input', target: 'openapi-3.0', unrepresentable: 'any' }) as Record<string, unknown>;
  delete rendered.$schema;
  return z
    .unknown()
    .transform((value, ctx): z.output<E>[] => {
      if (Array.isArray(value) && value.length >= minItems && acceptAll(value)) return value as z.output<E>[];
      const parsed = full.safeParse(value);
      if (parsed.success) return parsed.data;
      for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom', message: issue.message, path: issue.path });
      return z.NEVER;
    })
    .meta({ override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => Object.assign(jsonSchema, rendered) });
}
