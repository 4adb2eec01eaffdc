// Loaded into the Portkey process (node --import) for streaming only. Portkey 1.15.2 on @hono/node-server 1.19
// fails every streamed answer with `TypeError: immutable`: the node-server's Response reuses the fetch
// answer's Headers, which are immutable, and Portkey then appends its x-portkey-* headers to them. This gives a
// streamed upstream answer mutable headers (one Headers copy per stream); JSON answers are untouched.
const upstreamFetch = globalThis.fetch;
globalThis.fetch = async (...args) => {
  const res = await upstreamFetch(...args);
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) return res;
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers: new Headers(res.headers) });
};
