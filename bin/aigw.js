#!/usr/bin/env node
// The gateway is written in TypeScript and runs from source: tsx compiles each module once as it loads.
import { register } from 'tsx/esm/api';

register();
await import('../core/cli.ts');
