/**
 * Records the shutdown could not write (the database unreachable until the deadline) are kept in the data
 * folder, one NDJSON file per shutdown, and appended to the chain at the next start, before anything newer is
 * queued behind them. A record is never lost to an outage at shutdown; it is late. Append is idempotent by
 * record id, so a spool written twice, or replayed by two instances sharing the folder, adds each record once.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PluginDatabase, PluginLogger } from '../../core/pipeline/services.ts';
import { appendRecords, type PendingRecord } from './chain.ts';

export const spoolFolder = (dataDir: string) => join(dataDir, 'audit-spool');

export async function spoolRecords(folder: string, records: readonly PendingRecord[]): Promise<string> {
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const file = join(folder, `${String(Date.now()).padStart(15, '0')}-${process.pid}-${randomBytes(4).toString('hex')}.ndjson`);
  await writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n', { mode: 0o600 });
  return file;
}

/** Appends every spooled file, oldest first; a file is removed once its records are in the chain. */
export async function replaySpool(folder: string, db: PluginDatabase, logger: PluginLogger): Promise<number> {
  const files = (await readdir(folder).catch(() => [] as string[])).filter((f) => f.endsWith('.ndjson')).sort();
  let replayed = 0;
  for (const name of files) {
    const file = join(folder, name);
    const records = (await readFile(file, 'utf8')).split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line) as PendingRecord);
    for (let i = 0; i < records.length; i += 500) await appendRecords(db, records.slice(i, i + 500));
    await rm(file, { force: true });
    replayed += records.length;
    logger.info({ file, records: records.length }, 'audit: records spooled at the last shutdown are in the chain');
  }
  return replayed;
}
