import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../config.ts';
import { webhookRefusal } from '../../engine/beta/webhook-url.ts';

/** Which webhook URLs a schedule may name: SCHEDULE_WEBHOOK_HOSTS, read and applied. */
describe('webhook URLs', () => {
  const hosts = loadConfig({ SCHEDULE_WEBHOOK_HOSTS: 'Hooks.Example.com, 127.0.0.1:9000 ,[::1]:8443' }).schedules.webhookHosts;

  test('the setting lists hosts, lower-cased; a malformed entry stops the start naming it', () => {
    expect(hosts).toEqual(['hooks.example.com', '127.0.0.1:9000', '[::1]:8443']);
    expect(loadConfig({}).schedules.webhookHosts).toEqual([]);
    expect(() => loadConfig({ SCHEDULE_WEBHOOK_HOSTS: 'https://hooks.example.com' })).toThrow(/SCHEDULE_WEBHOOK_HOSTS .* got 'https:\/\/hooks.example.com'/);
  });

  test('a host alone allows every port; host:port only that one', () => {
    expect(webhookRefusal('https://hooks.example.com/a?b=c', hosts)).toBeNull();
    expect(webhookRefusal('http://HOOKS.example.com:8080/x', hosts)).toBeNull();
    expect(webhookRefusal('http://127.0.0.1:9000/hook', hosts)).toBeNull();
    expect(webhookRefusal('https://[::1]:8443/', hosts)).toBeNull();
    expect(webhookRefusal('http://127.0.0.1:9001/hook', hosts)).toMatch(/not on this server's list/);
    expect(webhookRefusal('http://127.0.0.1/hook', hosts)).toMatch(/not on this server's list/);
    expect(webhookRefusal('https://evil.example.com/', hosts)).toMatch(/names host 'evil.example.com'/);
  });

  test('only http and https, no credentials, and nothing at all without the setting', () => {
    expect(webhookRefusal('ftp://hooks.example.com/', hosts)).toBe('must be an http or https URL');
    expect(webhookRefusal('https://user:pw@hooks.example.com/', hosts)).toMatch(/may not carry credentials/);
    expect(webhookRefusal('not a url', hosts)).toBe('is not a URL');
    expect(webhookRefusal('https://hooks.example.com/', [])).toMatch(/SCHEDULE_WEBHOOK_HOSTS is empty/);
  });
});
