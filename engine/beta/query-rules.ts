import { describeLevel } from '../reconciliation/hierarchy-structure.ts';
import { MIN_OBSERVATIONS } from '../reconciliation/min-trace-weights.ts';
import { MAX_HORIZON } from '../request-schema.ts';
import { parseTimestamp } from '../time-index.ts';
import { floorToGrid, parseDuration, wholeSteps, type Duration } from './duration.ts';
import { hierarchyLevels, selectLevels, type Level } from './hierarchy.ts';
import { summariseRoles, type Aggregate, type BetaQuery, type RoleSummary } from './query-fields.ts';
import { ROLLS_UP_AS_SUM } from './rollup.ts';

/**
 * Rules between fields of the beta query that no single field's schema can see: the roles form
 * one table, durations are whole numbers of frequency steps, hierarchies and the selector name
 * identifier columns, covariates join on columns that exist, reconciliation has the hierarchy and
 * the levels its method needs. Paths are relative to the query.
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
  checkReconciliation(query, roles, issues);
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

/** Which methods read each option of `reconciliation`: an option another method would ignore is refused (decision 019). */
const OPTION_METHODS = { estimator: ['min_trace'], proportions: ['top_down', 'middle_out'], middle_level: ['middle_out'] } as const;
const RESIDUAL_ESTIMATORS: readonly string[] = ['wls_var', 'mint_shrink', 'mint_cov'];

/**
 * Reconciliation reads the levels the hierarchies roll up into: it needs hierarchies, options
 * that fit its method, the bottom level (every identifier kept), and for the top-down methods a
 * tree with the level they disaggregate from. Refused here, before a job exists, rather than
 * after its forecasts.
 */
function checkReconciliation(query: BetaQuery, roles: RoleSummary, issues: QueryIssue[]): void {
  const r = query.reconciliation;
  if (!r) return;
  const at = (...rest: string[]) => ['reconciliation', ...rest];
  const before = issues.length;
  if (Object.keys(query.input.hierarchies ?? {}).length === 0) {
    issues.push({ path: at(), message: 'reconciliation needs input.hierarchies: it reconciles the levels they roll up into' });
    return;
  }
  for (const name of roles.targets) {
    const aggregate = (query.input.columns?.[name] as { aggregate?: Aggregate } | undefined)?.aggregate;
    if (aggregate !== undefined && !ROLLS_UP_AS_SUM.has(aggregate))
      issues.push({
        path: ['input', 'columns', name, 'aggregate'],
        message: `reconciliation makes each parent the sum of its children, but '${name}' rolls up by its ${aggregate}; reconcile targets whose aggregate is sum, count, first or last`,
      });
  }
  for (const [option, methods] of Object.entries(OPTION_METHODS)) {
    if (r[option as keyof typeof OPTION_METHODS] !== undefined && !(methods as readonly string[]).includes(r.method))
      issues.push({ path: at(option), message: `${option} applies to ${methods.join(' and ')} only; the method is ${r.method}` });
  }
  if (r.method === 'middle_out' && !r.middle_level)
    issues.push({ path: at('middle_level'), message: 'middle_out needs middle_level: the identifiers its middle level keeps' });
  if (r.residual_window !== undefined) {
    const estimator = r.estimator ?? 'wls_struct';
    if (r.method !== 'min_trace' || !RESIDUAL_ESTIMATORS.includes(estimator))
      issues.push({ path: at('residual_window'), message: `only min_trace with ${RESIDUAL_ESTIMATORS.join(', ')} reads one-step residuals` });
    else if (r.residual_window < MIN_OBSERVATIONS[estimator as keyof typeof MIN_OBSERVATIONS])
      issues.push({
        path: at('residual_window'),
        message: `min_trace with ${estimator} needs at least ${MIN_OBSERVATIONS[estimator as keyof typeof MIN_OBSERVATIONS]} residuals per series`,
      });
  }
  // The levels below are only known once the hierarchies and the selector are sound.
  if (issues.length > before || issues.some((issue) => issue.path[0] === 'input' || issue.path[0] === 'selector')) return;
  const all = hierarchyLevels(roles.identifiers, query.input.hierarchies);
  let picked: Level[];
  try {
    picked = selectLevels(all, query.selector).levels;
  } catch {
    return; // the selector picks no level: the schema logic says so, listing them
  }
  const listed = (levels: Level[]) => levels.map(describeLevel).join(', ');
  if (!picked.some((level) => level.mask === 0)) {
    const bottom = describeLevel({ kept: roles.identifiers });
    issues.push({ path: ['selector'], message: `reconciliation needs the bottom level ${bottom}, which the selector leaves out (it picks ${listed(picked)})` });
    return;
  }
  if (r.method !== 'top_down' && r.method !== 'middle_out') return;
  const bySize = [...picked].sort((x, y) => x.kept.length - y.kept.length);
  const nested = bySize.every(
    (level, i) => i === 0 || (level.kept.length > bySize[i - 1].kept.length && bySize[i - 1].kept.every((name) => level.kept.includes(name))),
  );
  if (!nested) {
    const message = `${r.method} disaggregates along single parents and needs a tree, but the levels ${listed(picked)} cross (a grouped structure); use bottom_up or min_trace`;
    issues.push({ path: at('method'), message });
    return;
  }
  const needed =
    r.method === 'top_down' ? [...all].sort((x, y) => x.kept.length - y.kept.length)[0] : all.find((level) => sameSet(level.kept, r.middle_level ?? []));
  if (!needed) {
    issues.push({
      path: at('middle_level'),
      message: `${describeLevel({ kept: r.middle_level ?? [] })} is not a level of the hierarchies; the levels are ${listed(all)}`,
    });
  } else if (!picked.some((level) => level.mask === needed.mask)) {
    const role = r.method === 'top_down' ? 'the top level' : 'its middle level';
    issues.push({
      path: ['selector'],
      message: `${r.method} needs ${role} ${describeLevel(needed)}, which the selector leaves out (it picks ${listed(picked)})`,
    });
  }
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === new Set(b).size && a.every((name) => b.includes(name));
