import { useState } from 'preact/hooks';
import { ApiError, request } from '../api.ts';
import { keepKey } from '../session.ts';

/** Asks for an API key, checks it against the API, and keeps it for this tab only. */
export function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(notice);
  const [checking, setChecking] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setChecking(true);
    setError(null);
    try {
      // Any authenticated read proves the key; the job list is the cheapest one.
      await request('/forecast-jobs?limit=1', {}, key.trim());
      keepKey(key.trim());
      onSignedIn();
    } catch (err) {
      setError(err instanceof ApiError ? err.describe() : `The service did not answer: ${(err as Error).message}`);
    } finally {
      setChecking(false);
    }
  };

  return (
    <form class="sign-in card" onSubmit={submit}>
      <h1>Forecasting service</h1>
      <p>Sign in with an API key. It is kept in this browser tab only and sent to the API as a bearer token.</p>
      <label>
        API key <input name="api-key" type="password" autocomplete="off" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} required />
      </label>
      <button type="submit" disabled={checking || key.trim() === ''}>
        {checking ? 'Checking…' : 'Sign in'}
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
