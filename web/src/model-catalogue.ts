import { useEffect, useState } from 'preact/hooks';
import { getJson } from './api.ts';

/** A model of the server's catalogue (GET /models), as a picker offers it. */
export interface ModelChoice {
  readonly name: string;
  /** True when it runs on this server now: only these can be picked. */
  readonly installed: boolean;
  /** Why it does not run here, in the server's words; null when it does. */
  readonly unavailable_reason: string | null;
}

/** Statistical models every server runs: what the pickers show, with the model already chosen, until the catalogue answers. */
const EVERY_SERVER_RUNS = ['aets', 'naive', 'seasonal-naive', 'aarima', 'theta'];
const placeholder = (chosen: string): ModelChoice[] =>
  [...new Set([chosen, ...EVERY_SERVER_RUNS])].map((name) => ({ name, installed: true, unavailable_reason: null }));

/**
 * The server's models, installed first, in its own order, so that a picker never drifts from
 * what the server runs (docs/decisions/074-model-pickers-read-the-catalogue.md).
 */
export function useModelChoices(chosen: string): ModelChoice[] {
  const [choices, setChoices] = useState<ModelChoice[] | null>(null);
  useEffect(() => {
    getJson<{ models: ModelChoice[] }>('/models')
      .then(({ models }) => setChoices([...models.filter((m) => m.installed), ...models.filter((m) => !m.installed)]))
      .catch(() => undefined);
  }, []);
  return choices ?? placeholder(chosen);
}
