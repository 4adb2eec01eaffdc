/**
 * Fresh embedded-database folders for tests. initdb costs seconds, so one migrated template is made per
 * schema version and copied (tens of milliseconds) for every gateway.
 */
import { createHash } from 'node:crypto';
import { cpSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../core/store/database.ts';
import { migrate } from '../../core/store/migrate.ts';
import { builtInMigrations } from './config.ts';

const CORE_MIGRATIONS = fileURLToPath(new URL('../../core/store/migrations/', import.meta.url));

/** The core's and the built-in plugins' migrations: the template is theirs, named by their contents. */
async function templatePath(): Promise<string> {
  const hash = createHash('sha256');
  for (const { namespace, dir } of [{ namespace: '', dir: CORE_MIGRATIONS }, ...builtInMigrations]) {
    for (const file of (await readdir(dir)).sort()) hash.update(`${namespace}/${file}`).update(await readFile(join(dir, file)));
  }
  return join(tmpdir(), `aigw-pglite-template-${hash.digest('hex').slice(0, 12)}`);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

let template: Promise<string> | undefined;

function ensureTemplate(): Promise<string> {
  template ??= (async () => {
    const path = await templatePath();
    if (await exists(path)) return path;
    const building = await mkdtemp(join(tmpdir(), 'aigw-pglite-building-'));
    const db = await openDatabase({ dataDir: building });
    await migrate(db, builtInMigrations);
    await db.close();
    // Several test processes may race to build it: the first rename wins, the others drop their copy.
    await rename(building, path).catch(() => rm(building, { recursive: true, force: true }));
    return path;
  })();
  return template;
}

export async function freshDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'aigw-test-data-'));
  // cpSync: fs.cp's promises per file and step cost 0.85-1.7 s of CPU per copy of the template's thousand files
  // (40 MB) on the CI machine's disk, cpSync about 0.65 s; three gateway suites took 44.6 s of CPU, 37.6 s now.
  cpSync(await ensureTemplate(), dir, { recursive: true });
  return dir;
}
