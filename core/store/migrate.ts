import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any fixed number: every instance takes the same transaction-scoped lock, so two starting at once
// apply each migration exactly once.
const MIGRATION_LOCK = 7_263_001;

export interface MigrationResult {
  applied: string[];
  current: string | null;
}

export async function migrate(db: Database): Promise<MigrationResult> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS aigw_schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM aigw_schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const file of files) {
      const version = file.replace(/\.sql$/, '');
      if (done.has(version)) continue;
      await tx.exec(await readFile(MIGRATIONS_DIR + file, 'utf8'));
      await tx.query('INSERT INTO aigw_schema_migrations (version) VALUES ($1)', [version]);
      applied.push(version);
    }
    const last = files.at(-1);
    return { applied, current: last ? last.replace(/\.sql$/, '') : null };
  });
}
