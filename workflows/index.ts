/** Every workflow a job worker runs: jobs, and the runs of scheduled backtests. */
export { forecastJob } from './forecast-job.ts';
export { scheduledBetaRun, scheduledRunSummary } from './scheduled-run.ts';
