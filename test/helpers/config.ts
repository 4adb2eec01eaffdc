/** The config loader with the built-ins bound, as the CLI calls it. */
import { builtIns } from '../../core/cli/builtins.ts';
import * as load from '../../core/boot/load.ts';

export { builtIns };

export const parseConfig = (text: string, source: Omit<Parameters<typeof load.parseConfig>[1], 'builtIns'>) =>
  load.parseConfig(text, { ...source, builtIns });

export const loadConfig = (options: Omit<load.LoadOptions, 'builtIns'> = {}) => load.loadConfig({ ...options, builtIns });

/** The built-in plugins' migration folders, in registration order, as the gateway applies them. */
export const builtInMigrations = (builtIns.plugins as Array<{ name: string; migrations?: string }>)
  .flatMap((p) => (p.migrations ? [{ namespace: p.name, dir: p.migrations }] : []));
