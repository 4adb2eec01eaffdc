/** The built-ins the CLI (and tests, and embedders) hand to the config loader: the core itself names none. */
import { builtInPlugins, defaultPipeline } from '../../plugins/index.ts';
import { builtInProviders } from '../../providers/index.ts';
import type { BuiltIns } from '../boot/load.ts';

export const builtIns: BuiltIns = { plugins: builtInPlugins, providers: builtInProviders, defaultPipeline };
