import { MAX_HORIZON } from '../request-schema.ts';
import { parseTimestamp } from '../time-index.ts';
import { floorToGrid, parseDuration, wholeSteps, type Duration } from './duration.ts';
import { summariseRoles, type BetaQuery, type RoleSummary } from './query-fields.ts';

/**
 * Rules between fields of the beta query that no single field's schema can see: the roles form
 * one table, durations are whole numbers of frequency steps, hierarchies and the selector name
 * identifier columns, covariates join on columns that exist. Paths are relative to the query.
 */

export interface QueryIssue {
  path: (string | number)[];
  message: string;
}

/** A duration as a whole number of frequency steps, or the issue saying why not. */
function stepsOf(text: string, freq: Duration, path: (string | number)[], issues: QueryIssue[]): number | null {
  const d = parseDuration(text);
  if (!d) return null; // the field's own schema has reported it
  const steps = wholeSteps(d, freq);
  if (steps === null) {
    const hint =
      d.kind !== freq.kind
        ? freq.kind === 'fixed'
          ? ': calendar months vary in length, so write it in fixed units'
          : ': write it in months, quarters or years'
        : '';
    issues.push({ path, message: `'${text}' is not a whole number of ${freq.text} steps (the time column's frequency)${hint}` });
  }
  return steps;
}

export function checkQueryRules(query: BetaQuery): QueryIssue[] {
  const issues: QueryIssue[] = [];
  const columnsKey = query.input.columns ? 'columns' : 'schema';
  const columns = query.input.columns ?? query.input.schema;
  if (!columns) return issues;
  const roles = summariseRoles(columns);
  const at = (...rest: (string | number)[]) => ['input', columnsKey, ...rest];

  if (roles.time.length !== 1)
    issues.push({ path: at(), message: `name exactly one column with {"kind": "time", "frequency": ...}; found ${roles.time.length}` });
  if (roles.targets.length === 0) issues.push({ path: at(), message: 'name at least one column with {"kind": "target", "aggregate": ...}' });
  const freq = roles.time.length === 1 ? parseDuration(roles.time[0][1].frequency) : null;

  if (freq) {
    const horizon = stepsOf(query.prediction_length, freq, ['prediction_length'], issues);
    if (horizon !== null && horizon > MAX_HORIZON)
      issues.push({ path: ['prediction_length'], message: `is ${horizon} steps of ${freq.text}; at most ${MAX_HORIZON} are allowed` });
    if (query.context) stepsOf(query.context, freq, ['context'], issues);
    query.cutoff?.forEach((entry, i) => {
      if (typeof entry === 'string') {
        const ms = parseTimestamp(entry)?.time.toMillis();
        if (ms !== undefined && floorToGrid(ms, freq) !== ms)
          issues.push({
            path: ['cutoff', i],
            message: `${entry} is not on the ${freq.text} grid (steps start at ${new Date(floorToGrid(ms, freq)).toISOString()})`,
          });
      } else if (entry.start && entry.end) {
        const [s, e] = [entry.start, entry.end].map((t) => parseTimestamp(t)?.time.toMillis() ?? NaN);
        if (s > e) issues.push({ path: ['cutoff', i, 'start'], message: `start ${entry.start} is after end ${entry.end}` });
      }
    });
  }

  checkHierarchies(query, roles, issues);
  checkSelector(query, roles, issues);
  checkCovariates(query, roles, issues);
  return issues;
}

function checkHierarchies(query: BetaQuery, roles: RoleSummary, issues: QueryIssue[]): void {
  const ids = new Set(roles.identifiers);
  const owner = new Map<string, string>();
  for (const [key, paths] of Object.entries(query.input.hierarchies ?? {})) {
    const dimension = new Set([key]);
    if (!ids.has(key))
      issues.push({
        path: ['input', 'hierarchies', key],
        message: `'${key}' is not an identifier column (identifiers: ${roles.identifiers.join(', ') || 'none'})`,
      });
    paths.forEach((path, p) => {
      const steps = path[0] === key ? path.slice(1) : path;
      if (steps.length === 0)
        issues.push({ path: ['input', 'hierarchies', key, p], message: `a roll-up path lists the identifiers '${key}' rolls up into, finest first` });
      steps.forEach((name, j) => {
        const where = ['input', 'hierarchies', key, p, path[0] === key ? j + 1 : j];
        if (!ids.has(name))
          issues.push({ path: where, message: `'${name}' is not an identifier column (identifiers: ${roles.identifiers.join(', ') || 'none'})` });
        else if (steps.indexOf(name) !== j || name === key) issues.push({ path: where, message: `'${name}' appears twice on this path` });
        dimension.add(name);
      });
    });
    for (const name of dimension) {
      const other = owner.get(name);
      if (other !== undefined && other !== key)
        issues.push({
          path: ['input', 'hierarchies', key],
          message: `'${name}' is already in the hierarchy of '${other}'; an identifier belongs to one hierarchy`,
        });
      owner.set(name, key);
    }
  }
}

function checkSelector(query: BetaQuery, roles: RoleSummary, issues: QueryIssue[]): void {
  for (const name of Object.keys(query.selector ?? {})) {
    if (!roles.identifiers.includes(name))
      issues.push({ path: ['selector', name], message: `'${name}' is not an identifier column (identifiers: ${roles.identifiers.join(', ') || 'none'})` });
  }
}

function checkCovariates(query: BetaQuery, roles: RoleSummary, issues: QueryIssue[]): void {
  const taken = new Set(Object.keys((query.input.columns ?? query.input.schema)!));
  query.covariates?.forEach((cov, i) => {
    const covRoles = summariseRoles(cov.schema.columns);
    const at = (...rest: (string | number)[]) => ['covariates', i, ...rest];
    if (covRoles.targets.length > 0)
      issues.push({ path: at('schema', 'columns', covRoles.targets[0]), message: 'a covariate source has no target; its value columns are "historical"' });
    if (covRoles.historical.length === 0) issues.push({ path: at('schema', 'columns'), message: 'name at least one "historical" value column' });
    if (covRoles.time.length > 1) issues.push({ path: at('schema', 'columns'), message: 'a covariate source has at most one time column' });
    for (const name of covRoles.historical) {
      if (taken.has(name))
        issues.push({
          path: at('schema', 'columns', name),
          message: `'${name}' is already a column of the input or of another covariate; rename it in the source`,
        });
      taken.add(name);
    }
    cov.on.forEach((pair, j) => {
      const baseIsTime = roles.time.some(([n]) => n === pair.base);
      const attachedIsTime = covRoles.time.some(([n]) => n === pair.attached);
      if (!baseIsTime && !roles.identifiers.includes(pair.base))
        issues.push({ path: at('on', j, 'base'), message: `'${pair.base}' must be the time column or an identifier column of the input` });
      if (!attachedIsTime && cov.schema.columns[pair.attached] !== 'identifier')
        issues.push({ path: at('on', j, 'attached'), message: `'${pair.attached}' must be the time column or an identifier column of the covariate schema` });
      if (baseIsTime !== attachedIsTime) issues.push({ path: at('on', j), message: 'a time column joins only with a time column' });
    });
    if (covRoles.time.length === 1 && !cov.on.some((pair) => pair.attached === covRoles.time[0][0])) {
      issues.push({ path: at('on'), message: `join the covariate's time column '${covRoles.time[0][0]}' with the input's time column, or drop its role` });
    }
  });
}
