/** How late each tick of a `tickMs` timer fires in this process, sampled for `ms`: the event loop's delay, tick by tick. */
export function lateness(ms: number, tickMs: number): Promise<number[]> {
  return new Promise((resolve) => {
    const samples: number[] = [];
    const end = performance.now() + ms;
    let expected = performance.now() + tickMs;
    const tick = () => {
      const now = performance.now();
      samples.push(Math.max(0, now - expected));
      if (now >= end) return resolve(samples);
      expected = now + tickMs;
      setTimeout(tick, tickMs);
    };
    setTimeout(tick, tickMs);
  });
}
