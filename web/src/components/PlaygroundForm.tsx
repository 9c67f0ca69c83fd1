import { useEffect, useState } from 'preact/hooks';
import { MAX_WINDOWS, type Settings } from '../forecast-input.ts';
import { useModelChoices, type ModelChoice } from '../model-catalogue.ts';

/** Frequencies as the server's OpenAPI document lists them, so the form never drifts from the API. */
function useFrequencies(): string[] {
  const [freqs, setFreqs] = useState(['D', 'W', 'M', 'H']);
  useEffect(() => {
    fetch('/openapi')
      .then((r) => r.json())
      .then((doc) => {
        const listed: string[] | undefined = doc.components?.schemas?.ForecastRequest?.properties?.freq?.enum;
        if (listed) setFreqs(listed);
      })
      .catch(() => undefined);
  }, []);
  return freqs;
}

/** An installed model is picked by its name; another is shown, disabled, with the server's reason as its tooltip. */
const modelOption = (m: ModelChoice) =>
  m.installed ? (
    <option value={m.name}>{m.name}</option>
  ) : (
    <option value={m.name} disabled title={m.unavailable_reason ?? undefined}>
      {m.name} (not installed on this server)
    </option>
  );

export interface FormState extends Omit<Settings, 'quantiles'> {
  quantiles: string;
}

/** The playground's settings: model, horizon, frequency, quantiles and backtest windows. */
export function PlaygroundForm({ state, onChange }: { state: FormState; onChange: (next: FormState) => void }) {
  const models = useModelChoices(state.model);
  const freqs = useFrequencies();
  const set = (patch: Partial<FormState>) => onChange({ ...state, ...patch });
  const value = (e: Event) => (e.target as HTMLInputElement | HTMLSelectElement).value;
  return (
    <div class="settings">
      <label>
        Model
        <select name="model" value={state.model} onChange={(e) => set({ model: value(e) })}>
          {models.map(modelOption)}
        </select>
      </label>
      <label>
        Horizon
        <input name="horizon" type="number" min={1} value={state.horizon} onInput={(e) => set({ horizon: Number(value(e)) })} />
      </label>
      <label>
        Frequency
        <select name="freq" value={state.freq} onChange={(e) => set({ freq: value(e) })}>
          {freqs.map((f) => (
            <option value={f}>{f}</option>
          ))}
        </select>
      </label>
      <label>
        Quantiles
        <input name="quantiles" value={state.quantiles} onInput={(e) => set({ quantiles: value(e) })} />
      </label>
      <label title="A backtest job forecasts this many horizons at the end of each series and scores them">
        Backtest windows
        <input name="windows" type="number" min={1} max={MAX_WINDOWS} value={state.windows} onInput={(e) => set({ windows: Number(value(e)) })} />
      </label>
    </div>
  );
}
