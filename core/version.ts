import { readFileSync } from 'node:fs';

// From source this module sits in core/, from the compiled package in dist/core/: the manifest is one or two
// folders up.
function readVersion(): string {
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'aigw' && typeof manifest.version === 'string') return manifest.version;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  throw new Error('aigw: package.json not found beside the gateway');
}

export const VERSION = readVersion();
