/** Tests reach into a gateway's KV operations (kv.run) by name: to count them, or to make them fail. */
import type { KV } from '../../core/store/kv.ts';

type Run = KV['run'];

/**
 * Routes kv.run calls of the named operation through `replace` (given the operation's arguments and a way to
 * run it for real); other operations run as usual. Returns the undo.
 */
export function interceptOperation(kv: KV, name: string, replace: (args: never, original: () => Promise<unknown>) => Promise<unknown>): () => void {
  const own = Object.prototype.hasOwnProperty.call(kv, 'run') ? kv.run : undefined;
  const original: Run = kv.run;
  kv.run = ((operation, args) => (operation.name === name
    ? replace(args as never, () => original.call(kv, operation, args))
    : original.call(kv, operation, args))) as Run;
  return () => {
    if (own) kv.run = own;
    else delete (kv as Partial<KV>).run;
  };
}
