/**
 * Benchmark entry point: `npm run bench -- <name> [options]`.
 *
 * Each benchmark is a module beside this file exporting `run(args: string[]): Promise<void>`;
 * it parses its own options (`--help` for its usage). Adding one is one line in BENCHMARKS:
 *
 *   ensemble: ['M4 Hourly/Weekly: the ensemble\'s members and every combination of them, from one run of the members', () => import('./ensemble.ts')],
  backtest: ['what it measures', () => import('./backtest.ts')],
 */

interface BenchmarkModule {
  run(args: string[]): Promise<void>;
}

const BENCHMARKS: Record<string, readonly [summary: string, load: () => Promise<BenchmarkModule>]> = {
  accuracy: ['M4 Hourly/Weekly: sMAPE, MASE, CRPS, time per series; R ets/auto.arima reference', () => import('./accuracy.ts')],
  ensemble: ["M4 Hourly/Weekly: the ensemble's members and every combination of them, from one run of the members", () => import('./ensemble.ts')],
  'ensemble-threads': [
    'one ensemble request of a short set: its members fitting on every model thread against the whole request on one thread (wall, CPU, same forecasts)',
    () => import('./ensemble-threads.ts'),
  ],
  backtest: [
    '414 M4 Hourly series x 10 forecast creation dates (aets) through Temporal vs the engine directly: throughput and overhead',
    () => import('./backtest.ts'),
  ],
  beta: ['M4 Hourly uploaded as Parquet to /v1-beta/forecast: schema logic vs model time, peak memory', () => import('./beta.ts')],
  scale: [
    'one beta backtest job (100,000 weekly series x 10 cutoffs) through API and worker processes, Temporal and a bucket, vs the engine in-process',
    () => import('./scale.ts'),
  ],
  'arima-speed': [
    '33 short monthly/quarterly series (R datasets + seeded SARIMA): aarima CPU time vs R auto.arima, same model or not',
    () => import('./arima-speed.ts'),
  ],
  refit: ['a backtest of 20 creation dates per series refitting every date against every n-th: speed-up and accuracy given up', () => import('./refit.ts')],
  onnx: [
    'foundation models over M4 Hourly: our ONNX adapters against the reference PyTorch pipelines on the CPU, series/s and ratio',
    () => import('./onnx.ts'),
  ],
  'cold-start': [
    'a new API process and a new worker until they answer /healthz: from the sources with tsx against the build (npm run build)',
    () => import('./cold-start.ts'),
  ],
  reconciliation: [
    'hierarchy reconciliation: every method on a 50,000-bottom tree (time, memory, hierarchicalforecast peer); MASE and scaled CRPS per level on prison and visnights',
    () => import('./reconciliation.ts'),
  ],
  load: [
    '64 clients for 60 s (small sync forecasts, job submissions, polls) while a large job runs: 5xx, p99; POST /forecast req/s vs Fastify hello-world',
    () => import('./load.ts'),
  ],
};

function usage(): string {
  const names = Object.entries(BENCHMARKS).map(([name, [summary]]) => `  ${name.padEnd(12)} ${summary}`);
  return ['usage: npm run bench -- <name> [options]   (npm run bench -- <name> --help for its options)', '', 'benchmarks:', ...names].join('\n');
}

async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  const entry = name === undefined ? undefined : BENCHMARKS[name];
  if (!entry) {
    const help = name === undefined || name === '--help' || name === '-h';
    console.error(`${help ? '' : `unknown benchmark "${name}"\n\n`}${usage()}`);
    process.exitCode = help ? 0 : 2;
    return;
  }
  const mod = await entry[1]();
  await mod.run(args);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : e);
  process.exitCode = 1;
});
