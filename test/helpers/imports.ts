/** The repository's import graph, read from the sources: for tests that keep its shape (no cycles, a small public API). */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?'(\.[^']+)'/g;
const DYNAMIC = /import\(\s*'(\.[^']+)'\s*\)/g;

/** Every .ts file under the given top-level folders, as repository-relative paths. */
export function sourceFiles(folders: readonly string[]): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) files.push(relative(REPO, path));
    }
  };
  for (const folder of folders) walk(join(REPO, folder));
  return files.sort();
}

/** The relative imports of one file (static, re-exports, type-only and literal dynamic ones), repository-relative. */
export function importsOf(file: string): string[] {
  const text = readFileSync(join(REPO, file), 'utf8');
  const targets = [...text.matchAll(IMPORT), ...text.matchAll(DYNAMIC)].map((m) => m[1]!);
  return [...new Set(targets.map((target) => relative(REPO, resolve(REPO, dirname(file), target))))];
}

/** Every file reachable from `roots` through relative imports. */
export function reachable(roots: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...roots];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (file.endsWith('.ts')) queue.push(...importsOf(file));
  }
  return seen;
}
