/** Whether a source checkout's dist/ was built after the last change to any source file (bin/dist-fresh.js). */
export function distIsFresh(root: URL): boolean;
