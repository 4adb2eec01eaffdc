#!/usr/bin/env node
// A source checkout runs the TypeScript directly: tsx compiles each module once as it loads. An installed
// package ships only the compiled dist/ (no core/cli.ts beside this file) and needs no loader.
import { existsSync } from 'node:fs';

const source = new URL('../core/cli.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import(new URL('../dist/core/cli.js', import.meta.url).href);
}
