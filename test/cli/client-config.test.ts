import { expect, test } from 'vitest';
import { loadClientConfig } from '../../config.ts';

test('the CLI finds the service from FORECAST_URL, else the PORT a service in the same shell listens on, else 8080', () => {
  expect(loadClientConfig({})).toEqual({ baseUrl: 'http://127.0.0.1:8080', apiKey: null });
  expect(loadClientConfig({ PORT: '9000', FORECAST_API_KEY: 'k' })).toEqual({ baseUrl: 'http://127.0.0.1:9000', apiKey: 'k' });
  expect(loadClientConfig({ PORT: '9000', FORECAST_URL: 'https://forecasts.example.com/api' }).baseUrl).toBe('https://forecasts.example.com/api');
  // FORECAST_API_KEYS (plural) is the server's list of principal:key pairs, not the caller's key.
  expect(loadClientConfig({ FORECAST_API_KEYS: 'dev:dev-key' }).apiKey).toBeNull();
  expect(() => loadClientConfig({ PORT: 'eighty' })).toThrow("PORT must be a whole number >= 0; got 'eighty'");
});
