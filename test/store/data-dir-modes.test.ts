/**
 * The embedded database's folder is the owner's alone: created 0700 with files 0600 whatever the umask, and an
 * existing folder that lets others in is reported at start.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../helpers/config.ts';
import { createGateway } from '../../core/gateway.ts';
import { PgliteDatabase } from '../../core/store/pglite.ts';
import { looseDataDirModes } from '../../core/store/data-dir-modes.ts';

async function modes(root: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const name of await readdir(root, { recursive: true })) {
    found.set(name, (await stat(join(root, name))).mode & 0o777);
  }
  return found;
}

describe('data folder modes', () => {
  const folders: string[] = [];
  after(async () => {
    for (const dir of folders) await rm(dir, { recursive: true, force: true });
  });

  test('a new embedded database is 0700 with 0600 files, even under umask 000', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'aigw-modes-'));
    folders.push(parent);
    const dataDir = join(parent, 'data');
    const previous = process.umask(0);
    let db: PgliteDatabase;
    try {
      db = await PgliteDatabase.open(dataDir);
      await db.exec('CREATE TABLE t (x int); INSERT INTO t SELECT generate_series(1, 1000)');
      await db.exec('CHECKPOINT');
      await db.close();
    } finally {
      process.umask(previous);
    }
    assert.equal((await stat(dataDir)).mode & 0o777, 0o700);
    const all = await modes(dataDir);
    assert.ok(all.size > 100, `a whole cluster was written (${all.size} entries)`);
    const open = [...all].filter(([, mode]) => mode & 0o077);
    assert.deepEqual(open.slice(0, 5), [], `${open.length} of ${all.size} entries let group or others in`);
    assert.equal(all.get('pg_hba.conf'), 0o600);
    assert.equal(await looseDataDirModes(dataDir), undefined);
  });

  test('an existing folder open to others gets a warning at start, naming what is loose', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'aigw-modes-loose-'));
    folders.push(dataDir);
    await chmod(dataDir, 0o777);
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
    const loaded = await parseConfig('pipelines: []\n', { file: join(dataDir, 'pipelines.yaml'), env: { AIGW_DATA_DIR: dataDir } });
    const gateway = await createGateway(loaded, { logger: pino({ level: 'info' }, sink) });
    await gateway.close();
    const warning = lines.find((line) => String(line.msg).includes('data folder is open to other users'));
    assert.ok(warning, 'warned');
    assert.equal(warning.folderMode, '0777');
    assert.equal(warning.dataDir, dataDir);
    // The files the gateway created in it are still owner-only: only the folder itself was loose.
    const entries = [...(await modes(dataDir))].filter(([name]) => name !== 'pipelines.yaml');
    assert.deepEqual(entries.filter(([, mode]) => mode & 0o077).slice(0, 5), []);
  });
});
