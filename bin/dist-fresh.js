// Whether a source checkout's dist/ is fresh: built (scripts/build.mjs stamps dist/.built with the time the build
// started) after the last change to any source file. bin/aigw.js runs dist/ only then; the package tests pack the
// checkout without building it again only then, since a rebuild empties dist/ under gateways that run from it.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// ui/ too: dist/ui is built from it, and a checkout serves its admin UI from dist/ui.
const SOURCE_FOLDERS = ['core', 'plugins', 'providers', 'ui'];

/** @param {URL} root the checkout's root folder, as a file URL ending in a slash */
export function distIsFresh(root) {
  let builtAt;
  try {
    builtAt = statSync(new URL('dist/.built', root)).mtimeMs;
  } catch {
    return false;
  }
  for (const folder of SOURCE_FOLDERS) {
    if (!existsSync(new URL(folder, root))) continue;
    for (const entry of readdirSync(fileURLToPath(new URL(folder, root)), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && statSync(`${entry.parentPath}/${entry.name}`).mtimeMs > builtAt) return false;
    }
  }
  return true;
}
