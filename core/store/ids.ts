/**
 * Gateway ids are `<prefix>-<uuid>` (file-, batch-, resp-, ...). Anything else names nothing and is answered as
 * unknown without a query: a caller's id with a NUL in it would otherwise reach Postgres, which refuses it (a 500).
 */
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const shapes = new Map<string, RegExp>();

export function isGatewayId(prefix: string, id: string): boolean {
  let shape = shapes.get(prefix);
  if (!shape) shapes.set(prefix, (shape = new RegExp(`^${prefix}-${UUID}$`)));
  return shape.test(id);
}
