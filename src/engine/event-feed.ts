/**
 * The events of one run as a handle gives them: any number of iterations, at once or one after
 * another, each from the run's first event, each ending when the run ends.
 * @module
 */
import type { RunEvent } from './record.js';

/** A run's events, kept for every iteration of `handle.events`. @internal */
export class EventFeed implements AsyncIterable<RunEvent> {
  readonly #events: RunEvent[] = [];
  readonly #listener: ((event: RunEvent) => void) | undefined;
  #waiting: (() => void)[] = [];
  #ended = false;

  /** `listener` (the run's `onEvent`) hears each event after the iterations can see it. */
  constructor(listener?: (event: RunEvent) => void) {
    this.#listener = listener;
  }

  /**
   * Adds an event, then calls the listener. A listener that throws loses nothing: its error is
   * dropped, as a listener must not break the run or the events others read.
   */
  push(event: RunEvent): void {
    this.#events.push(event);
    this.#wake();
    try {
      this.#listener?.(event);
    } catch {
      // See above.
    }
  }

  /** The run ended: every iteration ends after the events it has not yet given. */
  end(): void {
    this.#ended = true;
    this.#wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    for (let next = 0; ;) {
      while (next < this.#events.length) yield this.#events[next++]!;
      if (this.#ended) return;
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }
}
