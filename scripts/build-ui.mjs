/**
 * The admin UI (ui/) into <outDir>: index.html, assets/app.js (one minified esbuild bundle of ui/src/main.tsx
 * with preact) and assets/style.css. scripts/build.mjs runs it into dist/ui; the UI test runs it into a folder
 * of its own, so that it never rewrites a dist/ other tests may be running.
 */
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const UI = join(dirname(dirname(fileURLToPath(import.meta.url))), 'ui');

/** @param {string} outDir */
export async function buildUi(outDir) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(join(outDir, 'assets'), { recursive: true });
  await build({
    entryPoints: [join(UI, 'src', 'main.tsx')],
    outfile: join(outDir, 'assets', 'app.js'),
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(join(UI, 'style.css'), join(outDir, 'assets', 'style.css'));
  copyFileSync(join(UI, 'index.html'), join(outDir, 'index.html'));
}
