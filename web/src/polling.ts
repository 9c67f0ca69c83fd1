import { useEffect } from 'preact/hooks';

/**
 * Runs `tick` now and every `ms` while `active`, never two at once (the next waits for the last
 * answer), and stops on unmount or when `deps` change; `tick` is read from the render that started it.
 */
export function usePolling(tick: () => Promise<unknown>, ms: number, active: boolean, deps: unknown[]): void {
  useEffect(() => {
    if (!active) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const run = async () => {
      await tick().catch(() => undefined);
      if (!stopped) timer = setTimeout(run, ms);
    };
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [active, ms, ...deps]);
}
