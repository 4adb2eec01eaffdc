/**
 * What `aigw start` checks before it opens the stores, so that an operator hears of a mistake at once rather
 * than after the migrations and plugin set-up: the port is free, and every provider has a credential.
 */
import { createServer } from 'node:net';
import type { GatewayConfig } from '../config/types.ts';

export class StartupError extends Error {}

/**
 * The address taken, in words an operator acts on: which host:port, and how to choose another. Used for the early
 * check and for the real listen, which can still lose a race to a process that took the port during set-up.
 */
export function listenFailure(err: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `${host}:${port}`;
  if (err.code === 'EADDRINUSE') {
    return new StartupError(`${where} is already in use (another aigw, or another program, listens there): stop it, or choose another port with server.port in the config or the PORT environment variable`);
  }
  if (err.code === 'EACCES') {
    return new StartupError(`${where} may not be bound by this user (ports below 1024 need privileges): choose another port with server.port in the config or the PORT environment variable`);
  }
  if (err.code === 'EADDRNOTAVAIL') {
    return new StartupError(`${where}: this machine has no such address: choose another server.host in the config or the HOST environment variable`);
  }
  return err;
}

/**
 * Binds the address and releases it at once. Bind-and-release rather than holding the socket through set-up:
 * the gateway's HTTP server is built after the stores open (its handlers need them), and connections queued on
 * a held socket would be reset when it is handed over. A process that takes the port in between is still named
 * by listenFailure when the real listen fails. Port 0 (any free port) needs no check.
 */
export async function ensurePortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err: NodeJS.ErrnoException) => reject(listenFailure(err, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export interface EmptyCredential {
  provider: string;
  /** The environment variables the apiKey refers to (`${VAR}`, `${VAR:-}`), when it refers to any. */
  variables: string[];
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Enabled providers whose apiKey is written but came out empty (`apiKey: ''`, or `${VAR:-}` with VAR unset or
 * empty). A provider with no apiKey at all is left alone: several sign their requests otherwise (AWS, Google).
 * `raw` is the config document before ${VAR} substitution, where the variable names still are.
 */
export function emptyCredentials(config: GatewayConfig, raw: unknown): EmptyCredential[] {
  const rawProviders = (raw as { providers?: Record<string, { apiKey?: unknown } | null> } | null)?.providers ?? {};
  return Object.entries(config.providers)
    .filter(([, block]) => block.enabled && block.apiKey !== undefined && block.apiKey.trim() === '')
    .map(([provider]) => {
      const written = rawProviders[provider]?.apiKey;
      const variables = typeof written === 'string' ? [...written.matchAll(VARIABLE)].map((m) => m[1]!) : [];
      return { provider, variables };
    });
}

/** One warning line per provider, naming the variable to set when there is one. */
export function describeEmptyCredential({ provider, variables }: EmptyCredential): string {
  const source = variables.length > 0 ? `: set ${variables.join(' or ')}` : ' in the config';
  return `provider "${provider}" has an empty apiKey${source}; its requests go upstream without a credential and will likely be refused`;
}
