/**
 * The embedded database's folder holds every key hash, usage record and the admin control token: it must be
 * the owner's alone. New folders are created 0700 and PGlite's files 0600 (core/store/owner-only-fs.mjs); a
 * folder made by an older version or by hand may be looser, which the gateway reports at start rather than
 * changing modes an operator may have chosen.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface LooseModes {
  /** The folder's own mode when group or others have any access to it, as octal text. */
  folder?: string;
  /** How many entries at the folder's top level (files and subfolders) group or others may write. */
  writableEntries: number;
}

const GROUP_OR_OTHER = 0o077;
const GROUP_OR_OTHER_WRITE = 0o022;

/** What is looser than owner-only in an existing data folder; undefined when it is tight or does not exist. */
export async function looseDataDirModes(dataDir: string): Promise<LooseModes | undefined> {
  const folder = await stat(dataDir).catch(() => undefined);
  if (!folder?.isDirectory()) return undefined;
  const found: LooseModes = { writableEntries: 0 };
  if (folder.mode & GROUP_OR_OTHER) found.folder = (folder.mode & 0o777).toString(8).padStart(4, '0');
  for (const name of await readdir(dataDir).catch(() => [] as string[])) {
    const entry = await stat(join(dataDir, name)).catch(() => undefined);
    if (entry && entry.mode & GROUP_OR_OTHER_WRITE) found.writableEntries++;
  }
  return found.folder || found.writableEntries > 0 ? found : undefined;
}
