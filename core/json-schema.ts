/** A JSON schema as the gateway passes them around: ajv compiles them, /openapi.json shows them. */
export type JsonSchema = Record<string, unknown>;

/** The `{object: list, data}` envelope of an answer that is a list, with its items' schema. */
export const listSchema = (items: JsonSchema): JsonSchema => ({
  type: 'object', required: ['object', 'data'],
  properties: { object: { type: 'string', enum: ['list'] }, data: { type: 'array', items } },
});

/** A page of a cursor-paginated list endpoint: the list envelope plus has_more and next_cursor (DESIGN.md). */
export const pageSchema = (items: JsonSchema): JsonSchema => {
  const list = listSchema(items) as { properties: Record<string, JsonSchema> };
  return {
    type: 'object', required: ['object', 'data', 'has_more', 'next_cursor'],
    properties: { ...list.properties, has_more: { type: 'boolean' }, next_cursor: { type: 'string', nullable: true } },
  };
};

/** The answer of a deletion: `{id, object, deleted: true}` with the object's own name. */
export const deletedSchema = (object: string): JsonSchema => ({
  type: 'object', required: ['id', 'object', 'deleted'],
  properties: { id: { type: 'string' }, object: { type: 'string', enum: [object] }, deleted: { type: 'boolean', enum: [true] } },
});
