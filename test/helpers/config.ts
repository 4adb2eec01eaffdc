/** The config loader with the built-ins bound, as the CLI calls it. */
import { builtIns } from '../../core/cli/builtins.ts';
import * as load from '../../core/boot/load.ts';
import type { AnyPluginDefinition } from '../../core/pipeline/plugin.ts';
import { migrationSourcesOf } from '../../core/pipeline/registry.ts';

export { builtIns };

export const parseConfig = (text: string, source: Omit<Parameters<typeof load.parseConfig>[1], 'builtIns'>) =>
  load.parseConfig(text, { ...source, builtIns });

export const loadConfig = (options: Omit<load.LoadOptions, 'builtIns'> = {}) => load.loadConfig({ ...options, builtIns });

/** The built-in plugins' migration folders, in registration order, as the gateway applies them. */
export const builtInMigrations = migrationSourcesOf(builtIns.plugins as AnyPluginDefinition[]);
