/**
 * The providers catalogue (PROVIDERS.md) lives in the shared folder beside the repository, not in it. Tests that
 * check the registry against it find it by walking up from the repository (or at $AIGW_PROVIDERS_CATALOGUE), and
 * fail, rather than skip, when it is nowhere: a check that never runs proves nothing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function candidates(): string[] {
  const found = process.env.AIGW_PROVIDERS_CATALOGUE ? [process.env.AIGW_PROVIDERS_CATALOGUE] : [];
  for (let dir = dirname(REPO); ; dir = dirname(dir)) {
    found.push(join(dir, 'shared', 'PROVIDERS.md'));
    if (dirname(dir) === dir) return found;
  }
}

/** One row of the catalogue's provider table: number, slug, family and modality letters, as written. */
export interface CatalogueRow {
  slug: string;
  family: string;
  modalities: string[];
}

export function catalogueRows(): CatalogueRow[] {
  const tried = candidates();
  const path = tried.find((file) => existsSync(file));
  if (!path) throw new Error(`PROVIDERS.md not found; looked at ${tried.join(', ')} (set AIGW_PROVIDERS_CATALOGUE to its path)`);
  return readFileSync(path, 'utf8').split('\n')
    .filter((line) => /^\| \d+ \|/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .map((cells) => ({ slug: cells[2]!, family: cells[3]!, modalities: cells[4]!.split(' ') }));
}
