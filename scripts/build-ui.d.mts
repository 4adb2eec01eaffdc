/** Builds the admin UI (ui/) into outDir: index.html and assets/ (scripts/build-ui.mjs). */
export function buildUi(outDir: string): Promise<void>;
