/**
 * The data-plane routes without parameters (/v1/chat/completions, /v1/embeddings, ...) served by one Map lookup,
 * their chain composed once at boot, ahead of the routers. Through @koa/router a request was matched against
 * every route of each of the four routers in turn and its chain composed again per request: about a tenth of
 * the gateway's CPU per request (docs/benchmarks.md). Anything the map does not hold exactly (another method, a
 * trailing slash, other letter case, a HEAD) goes on to the routers, which answer it as before.
 */
import compose from 'koa-compose';
import type { Context, Middleware } from 'koa';

export class StaticRoutes {
  private readonly chains = new Map<string, { pattern: string; chain: compose.ComposedMiddleware<Context> }>();

  /** Whether `pattern` is served here: no parameter and no wildcard in it. */
  static holds(pattern: string): boolean {
    return !pattern.includes(':') && !pattern.includes('*');
  }

  add(method: string, path: string, chain: Middleware[]): void {
    this.chains.set(`${method} ${path}`, { pattern: path, chain: compose(chain) });
  }

  middleware(): Middleware {
    return (ctx, next) => {
      const route = this.chains.get(`${ctx.method} ${ctx.path}`);
      if (!route) return next();
      // As @koa/router does for its routes: the request's trace names its route by it.
      ctx._matchedRoute = route.pattern;
      return route.chain(ctx);
    };
  }
}
