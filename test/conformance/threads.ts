// A thread entity: operations given to runOnThread run one after another in the background while
// the test goes on; waitForThread waits for them and fails with the first that failed.

export class TestThread {
  private tail: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;

  run(operation: () => Promise<void>): void {
    this.tail = this.tail.then(async () => {
      if (this.failure) return;
      try {
        await operation();
      } catch (error) {
        this.failure = { error };
      }
    });
  }

  async wait(): Promise<void> {
    await this.tail;
    if (this.failure) throw this.failure.error;
  }
}
