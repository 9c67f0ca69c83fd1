import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One temp folder for the run's data directories, removed at the end (test/temp-root.ts).
    globalSetup: ['test/temp-root.ts'],
    // Model fits and child processes (the keys CLI) take seconds on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
