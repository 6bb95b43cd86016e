/**
 * An in-process "machine" of the PGlite chaos tests: an engine working on an embedded PGlite
 * directory, which the test crashes without a graceful finish. A crash freezes every step at its
 * next crash point (or commit) like a dead process, closes the database under the engine, and only
 * then lets the frozen steps fail, so nothing they do can land: their jobs stay leased until the
 * lease lapses, as after a SIGKILL. The next machine opens the same directory.
 */
import { PGlite } from '@electric-sql/pglite';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import type { RunQueue } from '../../src/adapters/queue.js';
import { Engine } from '../../src/index.js';
import { hookedQueue, planned, QUEUE_TIMING, sinkAction, type CrashHook, type Reached } from './workflow.js';

/** Options of {@link Machine.open}. */
export interface MachineOptions {
  /** The PGlite directory. */
  dir: string;
  /** The schema of stepwire's tables. */
  schema: string;
  /** The sink's URL. */
  sinkUrl: string;
  /** Steps executed at once. */
  concurrency: number;
  /** Wraps the database's queue, e.g. to make some of its calls fail. */
  wrap?: (queue: RunQueue) => RunQueue;
  /** Crash points already taken (`<key>.<point>`), shared by the machines of a test: each is taken once. */
  taken: Set<string>;
}

/** An engine working on a PGlite directory, until {@link Machine.crash}. */
export class Machine {
  /** The engine. */
  readonly engine: Engine;
  /** The planned crash points this machine froze at. */
  readonly reached: Reached[] = [];
  readonly #pglite: PGlite;
  readonly #db: PostgresDatabase;
  readonly #worker: { stop(): Promise<void> };
  readonly #frozen: (() => void)[] = [];
  #crashed = false;
  #dead = false;

  private constructor(pglite: PGlite, db: PostgresDatabase, options: MachineOptions) {
    this.#pglite = pglite;
    this.#db = db;
    const hook: CrashHook = (reached) => {
      if (this.#crashed) return this.#freeze();
      const point = `${reached.key}.${reached.point}`;
      if (!planned(reached.plan, reached.step, reached.point) || options.taken.has(point)) return;
      options.taken.add(point);
      this.reached.push(reached);
      return this.#freeze();
    };
    this.engine = new Engine({
      storage: db.storage,
      queue: hookedQueue(this.#gated(options.wrap?.(db.queue) ?? db.queue), hook),
      actions: [sinkAction(options.sinkUrl, hook)],
    });
    this.#worker = this.engine.work({ concurrency: options.concurrency, triggers: false });
  }

  /** Opens the directory and starts working. */
  static async open(options: MachineOptions): Promise<Machine> {
    const pglite = await PGlite.create(options.dir);
    const db = await openPostgres({ pglite }, { schema: options.schema, queue: QUEUE_TIMING });
    return new Machine(pglite, db, options);
  }

  /** Crashes the machine: steps freeze, the database closes under them, then they fail. */
  async crash(): Promise<void> {
    this.#crashed = true;
    await this.#pglite.close();
    this.#dead = true;
    for (const release of this.#frozen.splice(0)) release();
    await this.#worker.stop();
    await this.#db.close();
  }

  /** Stops the machine gracefully (at the end of a test). */
  async close(): Promise<void> {
    if (this.#pglite.closed) return;
    await this.#worker.stop();
    await this.#db.close();
    await this.#pglite.close();
  }

  /**
   * The queue, each call made after the crash began frozen: the database closes only once the
   * transactions in flight have ended, and nothing reaches it afterwards.
   */
  #gated(queue: RunQueue): RunQueue {
    const gate =
      <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
      (...args: A): Promise<R> =>
        this.#crashed ? this.#freeze() : call(...args);
    return {
      available: queue.available,
      begin: gate((id, change) => queue.begin(id, change)),
      commit: gate((id, delivery, decide, loaded) => queue.commit(id, delivery, decide, loaded)),
      commitState: gate((id, delivery, decide) => queue.commitState(id, delivery, decide)),
      items: gate((id, step) => queue.items(id, step)),
      log: gate((id, events) => queue.log(id, events)),
      load: gate((id, log) => queue.load(id, log)),
      events: gate((id, after) => queue.events(id, after)),
      watch: (listener) => queue.watch(listener),
      work: (handler, options) => queue.work(handler, options),
    };
  }

  /** A promise that settles only when the machine crashes, failing like a step whose process died. */
  #freeze(): Promise<never> {
    if (this.#dead) return Promise.reject(new Error('the machine crashed'));
    return new Promise<never>((_, fail) => this.#frozen.push(() => fail(new Error('the machine crashed'))));
  }
}
