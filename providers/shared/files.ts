/** What the files translators share: headers without the JSON content type their chat headers carry. */
export { malformedAnswer } from './embeddings.ts';

/** A multipart body gets its content type (with its boundary) from the core; a DELETE has no body to type. */
export function withoutContentType(headers: Record<string, string>): Record<string, string> {
  const rest = { ...headers };
  for (const name of Object.keys(rest)) if (name.toLowerCase() === 'content-type') delete rest[name];
  return rest;
}
