/**
 * Runs `work` at most once per `everyMs`: the first request at once, any requests during the window once at its
 * end. No timer is left running once the requests stop.
 */
export class Throttle {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private due = false;

  constructor(
    private readonly work: () => void,
    private readonly everyMs: number,
  ) {}

  request(): void {
    if (this.timer) {
      this.due = true;
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.due) return;
      this.due = false;
      this.request();
    }, this.everyMs);
    this.work();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.due = false;
  }
}
