/** A JSON schema as the gateway passes them around: ajv compiles them, /openapi.json shows them. */
export type JsonSchema = Record<string, unknown>;
