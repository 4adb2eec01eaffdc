/**
 * Embeddings in the database (migration 0007_vector_stores): stored L2-normalized, so that cosine similarity is
 * a dot product whichever type holds them. The chunk column is pgvector's `vector` when the extension was there
 * at migration, else `real[]`; its actual type is read from the catalog (once per database), because a database
 * migrated before pgvector was installed keeps real[] even where `hasVector` is now true.
 */
import { validationError } from '../errors.ts';
import type { Database, Queryable } from './database.ts';

/** A database that can run a transaction: what the writes that must be atomic take. */
export type TransactionalDb = Queryable & Pick<Database, 'transaction'>;

export type EmbeddingColumn = 'vector' | 'real[]';

/** pgvector's `vector` holds at most 16,000 dimensions; real[] is held to the same bound. */
export const MAX_DIMS = 16_000;

/** pgvector's HNSW indexes `vector` up to 2,000 dimensions and `halfvec` up to 4,000. */
const HNSW_VECTOR_MAX_DIMS = 2_000;
const HNSW_HALFVEC_MAX_DIMS = 4_000;

/** `v` scaled to length 1; a vector that is empty, too long, not finite or zero has no direction and is refused. */
export function normalize(v: readonly number[], path = '/vector'): number[] {
  if (v.length === 0 || v.length > MAX_DIMS) throw validationError([{ path, message: `must have 1 to ${MAX_DIMS} dimensions` }]);
  let sum = 0;
  for (const x of v) {
    if (typeof x !== 'number' || !Number.isFinite(x)) throw validationError([{ path, message: 'must hold finite numbers only' }]);
    sum += x * x;
  }
  const norm = Math.sqrt(sum);
  // A zero vector, or one so small that its square underflowed: either way no direction to compare.
  if (!(norm > 0) || !Number.isFinite(norm)) throw validationError([{ path, message: 'must not be the zero vector' }]);
  return v.map((x) => x / norm);
}

const columns = new WeakMap<object, Promise<EmbeddingColumn>>();

/**
 * The type of vector_store_chunks.embedding in the database `db` opened (`vector_store_chunks` resolves through
 * the search path, as every statement does). Cached per database object: pass the database, not a transaction.
 */
export function embeddingColumn(db: Queryable): Promise<EmbeddingColumn> {
  let known = columns.get(db);
  if (!known) {
    known = db.query<{ type: string }>(
      `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
       WHERE attrelid = 'vector_store_chunks'::regclass AND attname = 'embedding' AND NOT attisdropped`,
    ).then((rows) => {
      const type = rows[0]?.type;
      if (type === 'vector' || type === 'real[]') return type;
      throw new Error(`vector_store_chunks.embedding has the unexpected type ${String(type)}`);
    });
    columns.set(db, known);
    // A failure (the database briefly unreachable) is not remembered: the next call asks again.
    known.catch(() => columns.delete(db));
  }
  return known;
}

/** The text form of a vector that `$n::text::vector` or `$n::text::real[]` reads. */
export function vectorParam(column: EmbeddingColumn, v: readonly number[]): string {
  const body = v.join(',');
  return column === 'vector' ? `[${body}]` : `{${body}}`;
}

/** The cast that turns vectorParam's text into the column's type. */
export const vectorCast = (column: EmbeddingColumn) => (column === 'vector' ? '::text::vector' : '::text::real[]');

/** The HNSW index of one embedding length: its name and the typed expression it indexes. */
export interface HnswIndex {
  name: string;
  /** e.g. `vector(1536)`: the search orders by `embedding::<cast> <=> $q::text::<cast>` to match the index. */
  cast: string;
  opclass: string;
}

/** The index for `dims`, or null where pgvector's HNSW cannot index that length (the search then scans). */
export function hnswIndex(dims: number): HnswIndex | null {
  if (!Number.isInteger(dims) || dims < 1) return null;
  if (dims <= HNSW_VECTOR_MAX_DIMS) return { name: `vector_store_chunks_hnsw_${dims}`, cast: `vector(${dims})`, opclass: 'vector_cosine_ops' };
  if (dims <= HNSW_HALFVEC_MAX_DIMS) return { name: `vector_store_chunks_hnsw_${dims}`, cast: `halfvec(${dims})`, opclass: 'halfvec_cosine_ops' };
  return null;
}

// Two instances creating the same index at once: the second would fail on the catalog's unique name; they take
// turns under this advisory lock (with the length as its second key).
const INDEX_LOCK = 7_263_002;
const indexed = new WeakMap<object, Set<number>>();

/**
 * Creates the partial HNSW index for chunks of `dims` dimensions unless it exists (`vector` column only). In a
 * transaction of its own, before the chunks are written: the build holds a lock on the table until its commit.
 */
export async function ensureHnswIndex(db: TransactionalDb, dims: number): Promise<void> {
  const index = hnswIndex(dims);
  const done = indexed.get(db) ?? new Set<number>();
  if (!index || done.has(dims)) return;
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [INDEX_LOCK, dims]);
    const [found] = await tx.query<{ name: string | null }>('SELECT to_regclass($1)::text AS name', [index.name]);
    if (found?.name) return;
    // dims is a checked integer: the statement text holds no caller input.
    await tx.exec(`CREATE INDEX ${index.name} ON vector_store_chunks
      USING hnsw ((embedding::${index.cast}) ${index.opclass}) WHERE dims = ${dims}`);
  });
  done.add(dims);
  indexed.set(db, done);
}
