/**
 * Appends rows given as CSV text to `table (columns)` in one statement, all or none. The text is COPY's csv format:
 * fields separated by commas, one row per line, an unquoted empty field is NULL and "" the empty string. Its own
 * file because the plugin contract names it (core/pipeline/services.ts) and may reach no other store file.
 */
export type CopyCsv = (table: string, columns: readonly string[], csv: string) => Promise<void>;
