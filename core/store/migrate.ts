import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';

const CORE_MIGRATIONS = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any fixed number: every instance takes the same transaction-scoped lock, so two starting at once
// apply each migration exactly once.
const MIGRATION_LOCK = 7_263_001;
const FILE = /^\d{4}_[\w-]+\.sql$/;

/** A plugin's migrations: its name, which prefixes their versions, and their folder. */
export interface MigrationSource {
  namespace: string;
  dir: string;
}

export interface MigrationResult {
  applied: string[];
  /** The last version of each source: the core's (no prefix), then `<plugin>/<version>` per plugin. */
  current: string[];
}

async function versionsIn(source: { namespace: string | null; dir: string }): Promise<Array<{ version: string; file: string }>> {
  const files = (await readdir(source.dir)).filter((f) => FILE.test(f)).sort();
  return files.map((f) => {
    const name = f.replace(/\.sql$/, '');
    return { version: source.namespace ? `${source.namespace}/${name}` : name, file: join(source.dir, f) };
  });
}

/** The core's migrations, then each plugin's in the order given; each applied once, all in one transaction. */
export async function migrate(db: Database, plugins: readonly MigrationSource[] = []): Promise<MigrationResult> {
  const sources = [{ namespace: null, dir: CORE_MIGRATIONS }, ...plugins];
  const lists = await Promise.all(sources.map((source) => versionsIn(source).catch((err: Error) => {
    throw new Error(`cannot read the migrations of ${source.namespace ? `plugin "${source.namespace}"` : 'the core'} in ${source.dir}: ${err.message}`);
  })));
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS aigw_schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM aigw_schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const { version, file } of lists.flat()) {
      if (done.has(version)) continue;
      try {
        await tx.exec(await readFile(file, 'utf8'));
      } catch (err) {
        throw Object.assign(new Error(`migration ${version} failed: ${(err as Error).message}`), { cause: err });
      }
      await tx.query('INSERT INTO aigw_schema_migrations (version) VALUES ($1)', [version]);
      applied.push(version);
    }
    return { applied, current: lists.flatMap((list) => (list.length > 0 ? [list.at(-1)!.version] : [])) };
  });
}
