import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { fanChart } from '../chart/fan-data.ts';
import type { FanView } from '../chart/model.ts';

/** A uPlot fan chart of a view, redrawn when the view changes and resized with its container. */
export function FanChart({ view, height = 340 }: { view: FanView; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current!;
    const width = () => Math.max(320, element.clientWidth);
    const { data, options } = fanChart(view, width(), height);
    // Says when the canvas has been drawn, and with how many forecasts (what the browser tests wait for).
    element.removeAttribute('data-drawn');
    const drawn = () => element.setAttribute('data-drawn', String(view.forecasts.length));
    const plot = new uPlot({ ...options, hooks: { draw: [drawn] } }, data, element);
    const resize = () => plot.setSize({ width: width(), height });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [view, height]);
  return <div class="fan-chart" ref={box} />;
}
