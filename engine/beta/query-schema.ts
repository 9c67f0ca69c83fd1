import { BetaQueryFields, ScheduledQueryFields } from './query-fields.ts';
import { checkQueryRules } from './query-rules.ts';

/**
 * The beta request (reference 2.8): the JSON `query` part of `POST /v1-beta/forecast`, its fields
 * (query-fields.ts) and the rules between them (query-rules.ts). This schema validates the part,
 * types the engine and generates the OpenAPI document.
 */
export const BetaQuery = BetaQueryFields.superRefine((query, ctx) => {
  for (const issue of checkQueryRules(query)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
}).meta({ id: 'BetaQuery' });

/** A scheduled backtest's query: the same rules, its sources locators only (read afresh by every run). */
export const ScheduledBetaQuery = ScheduledQueryFields.superRefine((query, ctx) => {
  for (const issue of checkQueryRules(query)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
}).meta({ id: 'ScheduledBetaQuery' });
