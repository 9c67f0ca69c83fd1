import cliProgress from 'cli-progress';
import type { ByteStep, InstallReporter, Stage } from '../../models/install/progress.ts';
import { formatBytes } from './long-format.ts';
import { formatDuration } from './progress.ts';

/**
 * How `models install` shows its steps: on a terminal, a bar per download (bytes) and a spinner
 * per step of unknown length (the export environment, the export, the warm-up), with the tools'
 * lines above them; elsewhere (a log, a pipe, CI) plain lines, a download's at most every few seconds.
 */
export interface ModelProgress extends InstallReporter {
  /** Ends the display: every bar drawn for the last time. */
  close(): void;
}

const SPINNER = ['|', '/', '-', '\\'];
const LINE_EVERY_MS = 5_000;
const seconds = (since: number) => formatDuration((Date.now() - since) / 1000);

function terminalProgress(stream: NodeJS.WriteStream): ModelProgress {
  const bars = new cliProgress.MultiBar(
    { stream, hideCursor: true, clearOnComplete: false, barsize: 30, fps: 5, autopadding: true },
    cliProgress.Presets.shades_classic,
  );
  const timers = new Set<NodeJS.Timeout>();
  return {
    bytes(label, total, done): ByteStep {
      const size = (value: number) => `${formatBytes(value)} of ${formatBytes(total)}`;
      const bar = bars.create(
        total,
        done,
        { label, size: size(done), status: done > 0 ? '(resumed)' : '' },
        { format: ' {bar} {percentage}% | {label} | {size} {status}' },
      );
      return {
        update: (value) => bar.update(value, { size: size(value), status: '' }),
        end: (summary) => (summary ? bar.update(total, { size: size(total), status: summary }) : bar.update({ status: 'failed' })),
      };
    },
    stage(label): Stage {
      const started = Date.now();
      let turn = 0;
      const bar = bars.create(1, 0, { label, spinner: SPINNER[0], elapsed: '0 s', status: '' }, { format: ' {spinner} {label} | {elapsed} {status}' });
      const timer = setInterval(() => bar.update(0, { spinner: SPINNER[++turn % SPINNER.length], elapsed: seconds(started) }), 250);
      timers.add(timer);
      return {
        end(summary) {
          clearInterval(timer);
          timers.delete(timer);
          bar.update(summary ? 1 : 0, { spinner: summary ? '\u2713' : '\u2717', elapsed: seconds(started), status: `| ${summary ?? 'failed'}` });
        },
      };
    },
    note: (line) => bars.log(`   ${line}\n`),
    close() {
      for (const timer of timers) clearInterval(timer);
      bars.stop();
    },
  };
}

function lineProgress(stream: NodeJS.WritableStream): ModelProgress {
  const write = (line: string) => stream.write(`${line}\n`);
  return {
    bytes(label, total, done): ByteStep {
      write(`download ${label}: ${formatBytes(total)}${done > 0 ? `, resuming at ${formatBytes(done)}` : ''}`);
      let lastLine = Date.now();
      return {
        update(value) {
          if (Date.now() - lastLine < LINE_EVERY_MS) return;
          lastLine = Date.now();
          write(`download ${label}: ${Math.floor((100 * value) / total)}% (${formatBytes(value)} of ${formatBytes(total)})`);
        },
        end: (summary) => write(`download ${label}: ${summary ?? 'failed'}`),
      };
    },
    stage(label): Stage {
      const started = Date.now();
      write(`${label}...`);
      return { end: (summary) => write(`${label}: ${summary ?? `failed after ${seconds(started)}`}`) };
    },
    note: (line) => write(`  ${line}`),
    close: () => undefined,
  };
}

/** Bars on a terminal, plain lines elsewhere. */
export const modelProgress = (stream: NodeJS.WriteStream): ModelProgress => (stream.isTTY ? terminalProgress(stream) : lineProgress(stream));
