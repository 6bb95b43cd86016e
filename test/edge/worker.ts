// The worker run by test/edge/workerd.test.ts: the stepwire engine and its HTTP handler inside workerd.
import { Engine, MemorySpreadsheets } from '../../src/index.js';
import { createHandler, type FetchHandler } from '../../src/http/index.js';

let handler: FetchHandler | undefined;

function build(): FetchHandler {
  const spreadsheets = new MemorySpreadsheets({
    shop: {
      customers: [
        ['id', 'name', 'city'],
        [1, 'Ada', 'London'],
        [2, 'Grace', 'New York'],
        [3, 'Linus', 'Helsinki'],
      ],
    },
  });
  return createHandler(new Engine({ spreadsheets }));
}

export default {
  // The engine is built on the first request: workerd forbids some work (timers, randomness) at startup.
  fetch(request: Request): Promise<Response> {
    handler ??= build();
    return handler(request);
  },
};
