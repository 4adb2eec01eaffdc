/** Tests reach into a gateway's KV operations (kv.run) by name: to count them, or to make them fail. */
import type { KV } from '../../core/store/kv.ts';

type Run = KV['run'];

/**
 * Routes kv.run calls of the named operation through `replace` (given the operation's arguments and a way to
 * run it for real); other operations run as usual. Returns the undo. While it is installed the KV has no runNow
 * (the in-process KV's synchronous path), so its callers take run(), as they do on Redis: a failure or a hang
 * stands in for a remote KV's.
 */
export function interceptOperation(kv: KV, name: string, replace: (args: never, original: () => Promise<unknown>) => Promise<unknown>): () => void {
  const own = Object.prototype.hasOwnProperty.call(kv, 'run') ? kv.run : undefined;
  const original: Run = kv.run;
  kv.run = ((operation, args) => (operation.name === name
    ? replace(args as never, () => original.call(kv, operation, args))
    : original.call(kv, operation, args))) as Run;
  const hadRunNow = kv.runNow !== undefined;
  if (hadRunNow) Object.defineProperty(kv, 'runNow', { value: undefined, configurable: true, writable: true });
  return () => {
    if (own) kv.run = own;
    else delete (kv as Partial<KV>).run;
    if (hadRunNow) delete (kv as Partial<KV>).runNow;
  };
}
