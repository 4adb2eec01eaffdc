/**
 * The admin UI's static files at /ui (built from ui/ into dist/ui by scripts/build.mjs). Served only when the
 * admin API is on; the files themselves need no credentials, every data call the page makes goes to /admin/v1
 * with the token the operator signs in with.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import type { Context } from 'koa';
import { GatewayError } from '../errors.ts';

export const UI_PREFIX = '/ui';

/**
 * dist/ui of the checkout when running from source (core/api/ -> ../../dist/ui), or of the package when running
 * the build (dist/core/api/ -> ../../ui, which is dist/ui).
 */
export function defaultUiDir(): string {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return basename(root) === 'dist' ? join(root, 'ui') : join(root, 'dist', 'ui');
}

// Scripts and styles only from the gateway itself, nothing inline, no framing: the page holds an admin token.
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

// One plain file name: no folder, no dot first (so neither `..` nor hidden files), an extension we serve.
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*\.(html|js|css|svg|png)$/;

export interface AdminUiOptions {
  /** Whether the admin API is on (an admin token or admin JWTs): the UI is served only then. */
  enabled: boolean;
  /** The built UI: index.html and assets/. */
  dir: string;
}

export function adminUiRouter(options: AdminUiOptions): Router {
  const router = new Router();
  const index = (ctx: Context) => serve(ctx, options, 'index.html');
  router.get(UI_PREFIX, index);
  router.get(`${UI_PREFIX}/`, index);
  router.get(`${UI_PREFIX}/assets/:name`, (ctx) => {
    const name = ctx.params.name ?? '';
    if (!ASSET_NAME.test(name)) throw notFound(ctx);
    return serve(ctx, options, join('assets', name));
  });
  return router;
}

function notFound(ctx: Context): GatewayError {
  return new GatewayError('NOT_FOUND', `No such file: ${ctx.path}`);
}

async function serve(ctx: Context, options: AdminUiOptions, relativePath: string): Promise<void> {
  if (!options.enabled) throw new GatewayError('NOT_FOUND', 'The admin UI is off with the admin API: set AIGW_ADMIN_TOKEN (or AIGW_JWT_SECRET for admin JWTs) to turn it on');
  let content: Buffer;
  try {
    content = await readFile(join(options.dir, relativePath));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (relativePath === 'index.html') {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.set(SECURITY_HEADERS);
      ctx.body = 'The admin UI is not built: run `npm run build` in the gateway\'s checkout, then reload.\n';
      return;
    }
    throw notFound(ctx);
  }
  const etag = `"${createHash('sha256').update(content).digest('base64url').slice(0, 27)}"`;
  ctx.set(SECURITY_HEADERS);
  // Asset names carry no hash: the browser asks again each time and gets 304 while the file is unchanged.
  ctx.set('cache-control', 'no-cache');
  ctx.set('etag', etag);
  if (ctx.get('if-none-match') === etag) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  ctx.type = CONTENT_TYPES[relativePath.slice(relativePath.lastIndexOf('.'))] ?? 'application/octet-stream';
  ctx.body = content;
}
