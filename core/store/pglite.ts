/**
 * The embedded database: PGlite (Postgres compiled to WASM) with its files under the data folder. PGlite runs
 * statements synchronously, so it lives in a worker thread (pglite-worker.mjs, whose header has the message
 * protocol) and the gateway's event loop only posts requests and receives rows.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { Database, Queryable, Row } from './database.ts';
import { StoreUnavailableError } from './deadline.ts';

const WORKER_URL = new URL('./pglite-worker.mjs', import.meta.url);

/** Table and column names copyCsv and copyBinary accept: they are written into the statement as they are. */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * Postgres's default is 128 MB, which PGlite touches at start: resident for the life of the process. The embedded
 * database is the dev and single-node store; its pages are also in the OS's file cache, so a small pool costs
 * little (docs/architecture.md, "PGlite's thread").
 */
const DEFAULT_SHARED_BUFFERS = '16MB';

export interface PgliteOptions {
  /** Postgres's shared_buffers, e.g. '16MB'. */
  sharedBuffers?: string;
}

type SerializedError = { name: string; message: string; stack?: string } & Record<string, string | undefined>;
type Startup = { ready: true } | { startupError: SerializedError };
type Reply = { id: number; ok: true; result?: unknown; returned?: Uint8Array } | { id: number; ok: false; error: SerializedError; returned?: Uint8Array };
type Request =
  | { op: 'query'; sql: string; params: unknown[] | undefined; tx: number | undefined }
  | { op: 'copy'; sql: string; bytes: Uint8Array }
  | { op: 'exec'; sql: string; tx: number | undefined }
  | { op: 'begin' | 'close' }
  | { op: 'commit' | 'rollback'; tx: number };

/** The COPY statement reading the worker's blob; the names are written into it as they are, so only plain ones pass. */
function copyStatement(method: string, table: string, columns: readonly string[], format: 'csv' | 'binary'): string {
  for (const name of [table, ...columns]) {
    if (!IDENTIFIER.test(name)) throw new Error(`${method}: ${JSON.stringify(name)} is not a plain SQL identifier`);
  }
  return `COPY ${table} (${columns.join(', ')}) FROM '/dev/blob' WITH (FORMAT ${format})`;
}

const UTF8 = new TextEncoder();

/** The worker's error as an Error again, with Postgres's fields (code '23505', constraint, ...) as own properties. */
function revive(serialized: SerializedError): Error {
  const { name, message, stack, ...fields } = serialized;
  const err = Object.assign(new Error(message), fields);
  err.name = name;
  if (stack) err.stack = stack;
  return err;
}

/**
 * PGlite's 9 MB of WebAssembly runs on V8's baseline compiler (Liftoff) only. By default V8 also recompiles the
 * functions that get hot with its optimizing compiler, and starting PGlite makes thousands of them hot: measured
 * on an existing data folder, that cost about 1.3 s of CPU in the first seconds and kept 35 to 70 MB more resident
 * (the gateway idled at 260-300 MB, 226-232 MB without it), for statements that run about 10% faster once all is
 * compiled. The flag is process-wide (V8 has no per-module setting): it applies to every WebAssembly module
 * compiled afterwards, which in the gateway is undici's HTTP parser, a small share of a request's CPU.
 */
function baselineWasmOnly(): void {
  setFlagsFromString('--liftoff-only');
}

let pgliteModule: Promise<WebAssembly.Module | undefined> | undefined;

/**
 * PGlite's WebAssembly, compiled once per process: a module handed to a worker shares its compiled code, where
 * each worker would otherwise compile the 9 MB again (about 0.1 s of CPU): the first start's two workers (initdb,
 * then the database), and every database a process opens (a test run opens hundreds). When it cannot be read
 * here, each worker loads its own as PGlite does by default.
 */
function compiledPglite(): Promise<WebAssembly.Module | undefined> {
  pgliteModule ??= readFile(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite')))
    .then((bytes) => WebAssembly.compile(bytes))
    .catch(() => undefined);
  return pgliteModule;
}

/**
 * The worker's JavaScript allocates little (messages and rows; Postgres's memory is the WebAssembly's), but a
 * worker gets the main thread's young generation by default, which under load became resident: aigw-full's RSS
 * after 15 s of closed-loop load 284-286 MB with it, 266-274 MB with 8 MB (bench/analysis.md, sixth step). At 2 MB the
 * gateway is ready with about 10 MB less (200-214 MB against 212-221, four starts each, in the same 1.3-1.5 s), and the
 * worker's scavenges cost 0.3 µs per request instead of 0.1 (twelfth step).
 */
const WORKER_YOUNG_GENERATION_MB = 2;

async function startWorker(dataDir: string, sharedBuffers: string, initOnly: boolean): Promise<Worker> {
  baselineWasmOnly();
  const wasmModule = await compiledPglite();
  // execArgv: [] so that a parent run with `--import tsx` does not load a TypeScript loader the worker never needs.
  const worker = new Worker(WORKER_URL, {
    workerData: { dataDir, sharedBuffers, initOnly, ...(wasmModule ? { wasmModule } : {}) },
    execArgv: [],
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });
  return new Promise((resolve, reject) => {
    const settle = (fn: () => void) => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      fn();
    };
    const onMessage = (message: Startup) => settle(() => {
      if ('ready' in message) return resolve(worker);
      reject(revive(message.startupError));
      void worker.terminate();
    });
    const onError = (err: Error) => settle(() => reject(err));
    const onExit = (code: number) => settle(() => reject(new Error(`the embedded database worker exited with code ${code} while starting`)));
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

async function initialized(dataDir: string): Promise<boolean> {
  return stat(join(dataDir, 'PG_VERSION')).then(() => true, () => false);
}

export class PgliteDatabase implements Database {
  readonly kind = 'pglite' as const;
  readonly hasVector = true;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  private nextId = 1;
  /** Set once no more calls can be served: the database was closed, or its worker died. */
  private refusal: string | undefined;
  private lastError: Error | undefined;
  private closing: Promise<void> | undefined;
  /** The close request's id, and whether the worker answered it: its exit is then the expected end. */
  private closeId = 0;
  private closeAnswered = false;

  private constructor(private readonly worker: Worker) {
    // Referenced only while a call waits for its answer: an idle database never keeps the process alive.
    worker.unref();
    worker.on('message', (reply: Reply) => this.settle(reply));
    // An uncaught error in the worker (it then exits); without a listener it would crash the gateway.
    worker.on('error', (err) => { this.lastError = err; });
    worker.on('exit', (code) => this.exited(code));
  }

  static async open(dataDir: string, options: PgliteOptions = {}): Promise<PgliteDatabase> {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const sharedBuffers = options.sharedBuffers ?? DEFAULT_SHARED_BUFFERS;
    // initdb's memory stays allocated in the thread that ran it (hundreds of MB): a first start runs it in a
    // thread of its own, ended before the database is opened for good.
    if (!(await initialized(dataDir))) await (await startWorker(dataDir, sharedBuffers, true)).terminate();
    return new PgliteDatabase(await startWorker(dataDir, sharedBuffers, false));
  }

  query<T = Row>(sql: string, params?: unknown[]): Promise<T[]> {
    return this.call({ op: 'query', sql, params, tx: undefined }) as Promise<T[]>;
  }

  async exec(sql: string): Promise<void> {
    await this.call({ op: 'exec', sql, tx: undefined });
  }

  /** COPY ... FROM the CSV text (Database.copyCsv): one string crosses to the worker instead of a value per cell. */
  readonly copyCsv = async (table: string, columns: readonly string[], csv: string): Promise<void> => {
    // encode() returns bytes in a fresh ArrayBuffer of their exact length, which the worker can take whole
    // (Buffer.from would use its shared pool for short text).
    await this.copy(copyStatement('copyCsv', table, columns, 'csv'), UTF8.encode(csv));
  };

  /** COPY ... FROM the binary stream (Database.copyBinary): the worker reads no text. */
  readonly copyBinary = async (table: string, columns: readonly string[], data: Uint8Array): Promise<void> => {
    // A copy: the caller's bytes stay usable (the writer's buffer is also larger than the stream).
    await this.copy(copyStatement('copyBinary', table, columns, 'binary'), new Uint8Array(data));
  };

  /**
   * The bytes move to the worker (no copy there) and come back with its answer, to be collected here: in the
   * worker, which allocates little JavaScript and so collects seldom, every batch's copies (the clone, then
   * PGlite's Blob and its arrayBuffer()) stayed until the external memory's limit forced a collection, and the
   * allocator kept their pages: a process that wrote 40,000 usage rows was 25-35 MB larger for it
   * (bench/analysis.md, tenth step).
   */
  private copy(sql: string, bytes: Uint8Array): Promise<unknown> {
    return this.call({ op: 'copy', sql, bytes }, [bytes.buffer as ArrayBuffer]);
  }

  /**
   * fn runs here; its statements run in the worker inside one PGlite transaction, which holds PGlite's lock until
   * the commit or rollback: statements from outside fn wait for it, as they did in-process.
   */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const id = (await this.call({ op: 'begin' })) as number;
    const tx: Queryable = {
      query: <R = Row>(sql: string, params?: unknown[]) => this.call({ op: 'query', sql, params, tx: id }) as Promise<R[]>,
      exec: async (sql: string) => { await this.call({ op: 'exec', sql, tx: id }); },
    };
    let result: T;
    try {
      result = await fn(tx);
    } catch (err) {
      // fn's error is the one worth reporting; a failed rollback (closed, worker gone) ends the transaction anyway.
      await this.call({ op: 'rollback', tx: id }).catch(() => {});
      throw err;
    }
    await this.call({ op: 'commit', tx: id });
    return result;
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    if (this.refusal !== undefined) return; // the worker is gone already
    // Calls made before close() are ahead of it in the worker's queue and still get their answers.
    this.closeId = this.nextId;
    const closed = this.send({ op: 'close' });
    this.refusal = 'the embedded database is closed';
    try {
      await closed;
    } finally {
      await this.worker.terminate();
    }
  }

  /** `transfer`: buffers the request hands to the worker instead of copying (postMessage's transfer list). */
  private call(request: Request, transfer?: ArrayBuffer[]): Promise<unknown> {
    if (this.refusal !== undefined) return Promise.reject(this.unavailable());
    return this.send(request, transfer);
  }

  private send(request: Request, transfer?: ArrayBuffer[]): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      try {
        this.worker.postMessage({ ...request, id }, transfer);
      } catch (err) {
        // Parameters structured clone cannot copy (a function, for one) fail here, before reaching the worker.
        return reject(err as Error);
      }
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref();
    });
  }

  private settle(reply: Reply): void {
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if (reply.id === this.closeId) this.closeAnswered = true;
    if (reply.ok) waiting.resolve(reply.result);
    else waiting.reject(revive(reply.error));
  }

  /** A database that can serve no more calls is a store outage to callers (503), not a bug (500). */
  private unavailable(): StoreUnavailableError {
    return Object.assign(new StoreUnavailableError('database', this.refusal ?? 'the embedded database is closed'), { cause: this.lastError });
  }

  /** After close's answer this only ends the thread; otherwise the worker died, and nothing it held will answer. */
  private exited(code: number): void {
    if (!this.closeAnswered) {
      const reason = this.lastError ? `: ${this.lastError.message}` : '';
      this.refusal = `the embedded database worker stopped (exit code ${code})${reason}`;
    }
    const err = this.unavailable();
    for (const { reject } of this.pending.values()) reject(err);
    this.pending.clear();
  }
}
