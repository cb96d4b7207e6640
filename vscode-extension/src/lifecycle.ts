/**
 * Restarts are queued, not stacked: one restart runs at a time, and any number of requests made
 * while it runs collapse into exactly one more restart after it (which then sees the newest
 * settings). Every request's promise settles when a restart that began after the request is done.
 */
export class RestartQueue {
  private current: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly task: () => Promise<void>) {}

  /** Whether a restart is running now. */
  get busy(): boolean {
    return this.current !== undefined;
  }

  request(): Promise<void> {
    if (this.queued) {
      return this.queued;
    }
    if (this.current) {
      const after = this.current;
      this.queued = after
        .catch(() => undefined)
        .then(() => {
          this.queued = undefined;
          return this.run();
        });
      return this.queued;
    }
    return this.run();
  }

  private run(): Promise<void> {
    const p = Promise.resolve().then(() => this.task());
    this.current = p;
    const clear = (): void => {
      if (this.current === p) {
        this.current = undefined;
      }
    };
    p.then(clear, clear);
    return p;
  }
}

/** A request that needs the daemon while it is not running. */
export class DaemonNotRunningError extends Error {
  constructor(readonly reason?: string) {
    super(`the Checkpoint daemon is not running${reason ? `: ${reason}` : ''}`);
    this.name = 'DaemonNotRunningError';
  }
}

/** The daemon's program cannot be had (no usable Python, say); the message says what to install or set. */
export class LaunchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LaunchError';
  }
}
