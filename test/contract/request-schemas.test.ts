/**
 * Request schemas compile on first use (core/validation.ts), so a schema ajv refuses would first fail a caller's
 * request: every schema the gateway's modules declare, and every built-in plugin's admin route schema, is compiled
 * here under the same strict settings instead.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import '../../core/gateway.ts';
import '../../core/cli/builtins.ts';
import { builtInPlugins } from '../../plugins/index.ts';
import { createAjv, declaredRequestSchemas } from '../../core/validation.ts';

test('every request schema the gateway declares compiles under the strict settings', () => {
  const schemas = [...declaredRequestSchemas(), ...builtInPlugins.flatMap((p) => (p.adminRoutes ?? []).flatMap((r) => (r.requestSchema ? [r.requestSchema] : [])))];
  // The core's endpoints alone declare more than twenty; a much smaller count means the modules were not loaded.
  assert.ok(schemas.length > 20, `only ${schemas.length} request schemas found`);
  const ajv = createAjv();
  for (const schema of schemas) assert.doesNotThrow(() => ajv.compile(schema), `schema ${JSON.stringify(schema).slice(0, 200)}`);
});
