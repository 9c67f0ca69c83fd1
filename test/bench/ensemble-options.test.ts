import { afterEach, describe, expect, it, vi } from 'vitest';
import { run } from './ensemble.ts';

describe("the ensemble benchmark's options", () => {
  afterEach(() => {
    process.exitCode = undefined;
    vi.restoreAllMocks();
  });

  const refused = async (argv: string[]) => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((message: string) => void errors.push(message));
    await run(argv);
    expect(process.exitCode).toBe(2);
    return errors.join('\n');
  };

  it('scores one period only on a set whose ends it staggers, and alone', async () => {
    expect(await refused(['--dataset', 'weekly', '--one-period'])).toMatch(/--one-period needs one of weekly-yearly, weekly-quarterly, weekly-monthly/);
    expect(await refused(['--dataset', 'yearly-panels', '--one-period'])).toMatch(/--one-period needs one of/);
    expect(await refused(['--dataset', 'weekly-yearly', '--one-period', '--end-draws', '3'])).toMatch(/leave out --origins and --end-draws/);
    expect(await refused(['--dataset', 'weekly-yearly', '--one-period', '--origins', '2'])).toMatch(/leave out --origins and --end-draws/);
  });

  it('sends one series per request only where each series is one task', async () => {
    expect(await refused(['--dataset', 'r-monthly', '--one-by-one', '--origins', '2'])).toMatch(/--one-by-one sends each series alone/);
  });
});
