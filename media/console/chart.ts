import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { overviewAt, type ConsoleOverview } from "../../extension/protocol/consoleProtocol";

const MINUTE = 60_000;
const HEIGHT = 160;

/** A theme colour of the editor (its CSS variable), for the canvas, which cannot read CSS variables itself. */
function themeColor(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

/** The last hour minute by minute (the server sends only minutes with jobs). */
function perMinute(overview: ConsoleOverview, now: number): uPlot.AlignedData {
  const last = Math.floor(now / MINUTE) * MINUTE;
  const byMinute = new Map(overviewAt(overview, now).throughput.map((m) => [m.minuteStart, m]));
  const times: number[] = [];
  // null, not 0, where nothing happened: uPlot draws no bar there (a 0 is a line on the axis)
  const finished: Array<number | null> = [];
  const failed: Array<number | null> = [];
  for (let t = last - 59 * MINUTE; t <= last; t += MINUTE) {
    times.push(t / 1000);
    finished.push(byMinute.get(t)?.finished || null);
    failed.push(byMinute.get(t)?.failed || null);
  }
  return [times, finished, failed];
}

/** What the chart shows, in words, for screen readers. */
function summary(overview: ConsoleOverview, now: number): string {
  const minutes = overviewAt(overview, now).throughput;
  const finished = minutes.reduce((n, m) => n + m.finished, 0);
  const failed = minutes.reduce((n, m) => n + m.failed, 0);
  return `Last hour: ${finished} job(s) finished, ${failed} failed`;
}

/**
 * The Overview's chart of jobs finished and failed per minute over the last hour (uPlot, on a canvas). One chart
 * lives while the Overview is shown: a new answer only replaces its data; `dispose` when the page changes.
 */
export class ThroughputChart {
  readonly element: HTMLElement;
  private readonly plot: uPlot;
  private readonly resize: ResizeObserver;

  constructor(overview: ConsoleOverview, now: number) {
    this.element = document.createElement("div");
    this.element.className = "chart";
    this.element.setAttribute("role", "img");
    const foreground = themeColor("--vscode-foreground", "#cccccc");
    const grid = themeColor("--vscode-editorGroup-border", "#444444");
    // Finished left of the minute's tick, failed right of it; no dots on the bars.
    const bars = (align: -1 | 1) => uPlot.paths.bars?.({ size: [0.45, 10], align });
    const axis = { stroke: foreground, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    this.plot = new uPlot(
      {
        width: 600,
        height: HEIGHT,
        cursor: { drag: { x: false, y: false } },
        scales: {
          // half a minute either side: the first and last minutes' bars sit beside their ticks, inside the plot
          x: { time: true, range: (_u, min, max) => [min - 30, max + 30] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
        },
        axes: [axis, { ...axis, size: 40, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] }],
        series: [
          {},
          { label: "Finished", stroke: themeColor("--vscode-charts-blue", "#3794ff"), fill: themeColor("--vscode-charts-blue", "#3794ff"), paths: bars(-1), points: { show: false } },
          { label: "Failed", stroke: themeColor("--vscode-charts-red", "#f14c4c"), fill: themeColor("--vscode-charts-red", "#f14c4c"), paths: bars(1), points: { show: false } },
        ],
      },
      perMinute(overview, now),
      this.element,
    );
    this.resize = new ResizeObserver(() => {
      const width = this.element.clientWidth;
      if (width > 0 && width !== this.plot.width) this.plot.setSize({ width, height: HEIGHT });
    });
    this.resize.observe(this.element);
    this.element.setAttribute("aria-label", summary(overview, now));
  }

  update(overview: ConsoleOverview, now: number): void {
    this.plot.setData(perMinute(overview, now));
    this.element.setAttribute("aria-label", summary(overview, now));
  }

  dispose(): void {
    this.resize.disconnect();
    this.plot.destroy();
  }
}
