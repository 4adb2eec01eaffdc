#!/usr/bin/env node
// An installed package ships only the compiled dist/ and runs it. A source checkout runs dist/ too when it is
// fresh (built after the last change to any source file: `npm ci` and `npm run build` build it), which starts
// in a fraction of the time and memory of compiling TypeScript as it loads; otherwise it runs the TypeScript
// through tsx, so an edit is never answered by an older build. AIGW_FROM_SOURCE=1 always runs the source.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../', import.meta.url);
const SOURCE = new URL('core/cli.ts', ROOT);
const COMPILED = new URL('dist/core/cli.js', ROOT);
// Written by scripts/build.mjs, its modification time set to when the build started.
const BUILD_STAMP = new URL('dist/.built', ROOT);
const SOURCE_FOLDERS = ['core', 'plugins', 'providers'];

function distIsFresh() {
  let builtAt;
  try {
    builtAt = statSync(BUILD_STAMP).mtimeMs;
  } catch {
    return false;
  }
  for (const folder of SOURCE_FOLDERS) {
    for (const entry of readdirSync(fileURLToPath(new URL(folder, ROOT)), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && statSync(`${entry.parentPath}/${entry.name}`).mtimeMs > builtAt) return false;
    }
  }
  return true;
}

if (!existsSync(SOURCE) || (process.env.AIGW_FROM_SOURCE !== '1' && distIsFresh())) {
  await import(COMPILED.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(SOURCE.href);
}
