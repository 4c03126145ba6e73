// Runs jobs strictly one at a time, in arrival order: every function call of the server goes through one.
export class CallQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  run<T>(job: () => Promise<T>): Promise<T> {
    this.waiting++;
    const result = this.tail.then(async () => {
      this.waiting--;
      return await job();
    });
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Jobs queued but not yet started. */
  get pending(): number {
    return this.waiting;
  }

  /** Resolves once every job queued so far has finished. */
  async idle(): Promise<void> {
    await this.tail;
  }
}
