import { z } from 'zod';
import { events } from './events/events.ts';
import { float } from './float/float.ts';
import { forex } from './forex/forex.ts';
import { holidays } from './holidays.ts';
import type { CovariateKind } from './kind.ts';
import { temporalFeatures } from './temporal-features.ts';

/**
 * Every kind of generated covariate, one module each. The request's `covariates` entries are
 * validated by the schema made from these (reference 2.3: `type` and `config`, both required),
 * which the OpenAPI document shows in this order.
 */

const entry = <K extends CovariateKind>(kind: K) => z.strictObject({ type: z.literal(kind.type as K['type']), config: kind.config as K['config'] });

export const Covariate = z
  .discriminatedUnion('type', [entry(holidays), entry(events), entry(float), entry(forex), entry(temporalFeatures)])
  .meta({ id: 'Covariate' });

export type Covariate = z.output<typeof Covariate>;

const KINDS = new Map<string, CovariateKind>([holidays, events, float, forex, temporalFeatures].map((kind) => [kind.type, kind as CovariateKind]));

/** The module of a covariate's kind. */
export const covariateKind = (type: Covariate['type']): CovariateKind => KINDS.get(type)!;
