/**
 * The embedded database's thread: PGlite runs here so that its WASM, which executes synchronously, never holds
 * the gateway's event loop. Plain JavaScript on purpose: a worker thread does not inherit the TypeScript loader
 * that bin/aigw.js registers, so this file must load with Node alone. The main side is core/store/pglite.ts.
 *
 * Protocol. workerData: `{ dataDir: string, sharedBuffers: string, initOnly: boolean, wasmModule?: WebAssembly.Module }`
 * (initOnly: create the folder's database, close it and end; wasmModule: PGlite's WebAssembly, compiled once by
 * the main side for every worker of the process).
 * Once started, the worker posts `{ ready: true }` or `{ startupError: SerializedError }` (then ends).
 * Requests (main -> worker), each with a numeric `id` unique among those in flight:
 *   `{ id, op: 'query', sql, params?, tx? }`  -> result: the rows
 *   `{ id, op: 'copy', sql, bytes }`         -> result: undefined, once `COPY ... FROM '/dev/blob'` has read bytes
 *                                               (a Uint8Array filling its own ArrayBuffer, transferred), which
 *                                               the reply transfers back as `returned`
 *   `{ id, op: 'exec', sql, tx? }`            -> result: undefined
 *   `{ id, op: 'begin' }`                    -> result: the transaction's id, once BEGIN has run
 *   `{ id, op: 'commit' | 'rollback', tx }`  -> result: undefined, once the transaction has ended
 *   `{ id, op: 'close' }`                    -> result: undefined, once PGlite is closed (the worker then ends)
 * `tx` names an open transaction: the statement runs inside it. Other statements wait until it ends.
 * Replies (worker -> main): `{ id, ok: true, result }` or `{ id, ok: false, error: SerializedError }`.
 * SerializedError: `{ name, message, stack, ...Postgres fields (code, detail, constraint, ...) }`, as strings.
 * Rows and params cross by structured clone, which keeps Date, Uint8Array, bigint and plain objects.
 */
// First: PGlite's files must be created owner-only (see the file).
import './owner-only-fs.mjs';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

/** The fields of PGlite's DatabaseError (the Postgres ErrorResponse), plus the statement PGlite attaches. */
const ERROR_FIELDS = ['severity', 'code', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery', 'where',
  'schema', 'table', 'column', 'dataType', 'constraint', 'file', 'line', 'routine', 'query'];

/** Postgres errors carry their fields as own properties, which structured clone would drop: copied by hand. */
function serializeError(err) {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const out = { name: err.name, message: err.message, stack: err.stack };
  for (const field of ERROR_FIELDS) {
    if (typeof err[field] === 'string') out[field] = err[field];
  }
  return out;
}

/**
 * `bytes`: a copy's bytes, handed back with the answer so that they are collected on the main thread, which
 * collects often; this thread allocates little and collects seldom, so they would stay until its external memory
 * forced a collection.
 */
function post(message, bytes) {
  try {
    if (bytes) parentPort.postMessage({ ...message, returned: bytes }, [bytes.buffer]);
    else parentPort.postMessage(message);
  } catch (err) {
    // A result that cannot be cloned still answers its request.
    parentPort.postMessage({ id: message.id, ok: false, error: serializeError(err) });
  }
}

/** Thrown into a held transaction's callback to make PGlite roll it back. */
const ROLLBACK = Symbol('rollback');

/** Open transactions by id: PGlite's handle, and how to end the callback that holds it open. */
const transactions = new Map();
/** Set by close: a transaction that gets PGlite's lock afterwards is refused, or close would wait behind it. */
let closing = false;

/**
 * PGlite's own transaction() holds its lock for as long as the callback runs; the callback here waits for the
 * main side's commit or rollback, so every statement outside the transaction queues behind it, as in-process.
 */
function begin(pg, id) {
  let end;
  const ended = new Promise((resolve, reject) => { end = { resolve, reject }; });
  const entry = { tx: undefined, end, endId: undefined };
  let opened = false;
  pg.transaction(async (tx) => {
    if (closing) throw new Error('PGlite is closed');
    entry.tx = tx;
    transactions.set(id, entry);
    opened = true;
    post({ id, ok: true, result: id });
    await ended;
  }).then(
    () => post({ id: entry.endId, ok: true }),
    (err) => {
      if (err === ROLLBACK) post({ id: entry.endId, ok: true });
      else post({ id: opened ? entry.endId : id, ok: false, error: serializeError(err) });
    },
  ).finally(() => transactions.delete(id));
}

function target(pg, txId) {
  if (txId === undefined) return pg;
  const entry = transactions.get(txId);
  if (!entry || entry.endId !== undefined) throw new Error('Transaction is closed');
  return entry.tx;
}

/**
 * A Blob over bytes already here: PGlite reads a /dev/blob through arrayBuffer(), which on a Blob made of the bytes
 * would be their third copy in this thread (the clone, the Blob's, the ArrayBuffer's).
 */
class BytesBlob extends Blob {
  #buffer;
  constructor(buffer) {
    super();
    this.#buffer = buffer;
  }

  get size() {
    return this.#buffer.byteLength;
  }

  arrayBuffer() {
    return Promise.resolve(this.#buffer);
  }
}

async function handle(pg, message) {
  switch (message.op) {
    case 'query': return (await target(pg, message.tx).query(message.sql, message.params)).rows;
    case 'copy': await pg.query(message.sql, [], { blob: new BytesBlob(message.bytes.buffer) }); return undefined;
    case 'exec': await target(pg, message.tx).exec(message.sql); return undefined;
    default: throw new Error(`unknown operation ${message.op}`);
  }
}

function end(message) {
  const entry = transactions.get(message.tx);
  if (!entry || entry.endId !== undefined) throw new Error('Transaction is closed');
  entry.endId = message.id;
  if (message.op === 'commit') entry.end.resolve();
  else entry.end.reject(ROLLBACK);
}

async function close(pg, id) {
  closing = true;
  // PGlite's close waits for its lock: a transaction the main side never ends would hold it forever.
  for (const [txId, entry] of transactions) {
    if (entry.endId !== undefined) continue;
    entry.endId = -1;
    entry.end.reject(ROLLBACK);
    transactions.delete(txId);
  }
  try {
    await pg.close();
    post({ id, ok: true });
  } catch (err) {
    post({ id, ok: false, error: serializeError(err) });
  }
  parentPort.close();
}

/**
 * PGlite reports a failed start as "PGlite failed to initialize properly"; Postgres's reason (a data folder that
 * is not one, a version mismatch) is only in its log lines, kept here to complete the error.
 */
function startupReason(lines, dataDir) {
  return lines
    .map((line) => line.replace(/^\S+ \S+ \S+ \[\d+\] /, '').replaceAll('/pglite/data', dataDir).replace(/\s+/g, ' ').trim())
    .filter((line) => /^(PANIC|FATAL|ERROR|DETAIL|HINT):/.test(line))
    .join(' ');
}

async function start() {
  const { dataDir, sharedBuffers, initOnly, wasmModule } = workerData;
  // On the command line rather than in postgresql.conf: PGlite's `postgresqlconf` option rewrites that file.
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`];
  const log = [];
  let starting = true;
  const onStderr = (line) => {
    if (starting && log.length < 50) log.push(line);
    return false;
  };
  let pg;
  try {
    pg = await PGlite.create(dataDir, { extensions: { vector }, startParams, onStderr, ...(wasmModule ? { pgliteWasmModule: wasmModule } : {}) });
    if (initOnly) {
      await pg.close();
    } else {
      await pg.exec('CREATE EXTENSION IF NOT EXISTS vector');
    }
  } catch (err) {
    await pg?.close().catch(() => {});
    const error = serializeError(err);
    const reason = startupReason(log, dataDir);
    if (reason) error.message = `${error.message}: ${reason}`;
    post({ startupError: error });
    parentPort.close();
    return;
  }
  starting = false;
  log.length = 0;
  post({ ready: true });
  if (initOnly) {
    parentPort.close();
    return;
  }
  parentPort.on('message', (message) => {
    if (message.op === 'begin') return begin(pg, message.id);
    if (message.op === 'close') return void close(pg, message.id);
    if (message.op === 'commit' || message.op === 'rollback') {
      try {
        end(message);
      } catch (err) {
        post({ id: message.id, ok: false, error: serializeError(err) });
      }
      return undefined;
    }
    handle(pg, message).then(
      (result) => post({ id: message.id, ok: true, result }, message.bytes),
      (err) => post({ id: message.id, ok: false, error: serializeError(err) }, message.bytes),
    );
    return undefined;
  });
}

await start();
