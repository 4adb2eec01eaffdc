/**
 * Loaded first in the embedded database's thread (core/store/pglite-worker.mjs): every file and folder PGlite
 * creates under the data folder is the owner's alone, whatever the process umask. PGlite's Emscripten file
 * system creates files and then chmods them to the mode Postgres asked of its own virtual umask (0666 for most
 * files), so the real umask cannot be relied on. The `fs` object patched here belongs to this worker thread
 * only: the gateway's own thread keeps Node's functions untouched.
 */
import fs from 'node:fs';

/** Group and other bits are dropped from every mode PGlite passes. */
const OWNER_ONLY = 0o700;

const ownerOnly = (mode) => (typeof mode === 'number' ? mode & OWNER_ONLY : mode);

const { mkdirSync, writeFileSync, openSync, chmodSync, fchmodSync } = fs;

fs.mkdirSync = (path, options) => mkdirSync(path, typeof options === 'object' && options !== null
  ? { ...options, mode: ownerOnly(options.mode ?? 0o777) }
  : ownerOnly(options ?? 0o777));
fs.writeFileSync = (path, data, options) => writeFileSync(path, data, typeof options === 'object' && options !== null
  ? { ...options, mode: ownerOnly(options.mode ?? 0o666) }
  : { ...(typeof options === 'string' ? { encoding: options } : {}), mode: 0o600 });
fs.openSync = (path, flags, mode) => openSync(path, flags, ownerOnly(mode ?? 0o666));
fs.chmodSync = (path, mode) => chmodSync(path, ownerOnly(mode));
fs.fchmodSync = (fd, mode) => fchmodSync(fd, ownerOnly(mode));
