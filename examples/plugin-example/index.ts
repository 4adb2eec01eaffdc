/**
 * An aigw plugin in a package of its own: `example-header` sets a response header, named and valued by its
 * entry's config, on every answer of the pipelines that list it. The gateway compiles this file as it loads it
 * (no build step); `aigw/plugin` gives the contract and its types.
 */
import { definePlugin } from 'aigw/plugin';

interface ExampleHeaderConfig {
  header: string;
  value: string;
}

export default definePlugin<ExampleHeaderConfig>({
  name: 'example-header',
  description: 'Sets a response header from its config on every answer.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['value'],
    properties: {
      header: { type: 'string', pattern: '^[A-Za-z0-9-]+$', default: 'X-Example', description: 'The response header to set.' },
      value: { type: 'string', description: 'Its value.' },
    },
  },
  setup(config) {
    return async (ctx, next) => {
      await next();
      // After next(): the answer exists and its headers are not written yet, streams included.
      ctx.set(config.header, config.value);
    };
  },
});
