/** The identity side of a gateway (or of a CLI acting on its stores), built once from the config and the stores. */
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../logger.ts';
import type { Database } from '../store/database.ts';
import type { KV } from '../store/kv.ts';
import { ApiKeyService } from './api-keys.ts';
import { Authenticator } from './authenticate.ts';
import { Directory } from './directory.ts';
import { JwtRevocations, JwtVerifier } from './jwt.ts';
import { LastUsedRecorder } from './last-used.ts';

export interface IdentityServices {
  apiKeys: ApiKeyService;
  directory: Directory;
  revocations: JwtRevocations;
  authenticator: Authenticator;
  /** Whether JWTs are accepted (auth.jwt.secret is set). */
  jwtEnabled: boolean;
  lastUsed: LastUsedRecorder;
}

export function createIdentity(config: GatewayConfig, db: Database, kv: KV, now: () => number, logger: Logger): IdentityServices {
  const { auth } = config;
  const lastUsed = new LastUsedRecorder(db, auth.lastUsedFlushIntervalMs, (err) => logger.warn({ err }, 'could not record last-used times; will retry'));
  const apiKeys = new ApiKeyService(db, kv, auth.keyCacheTtlMs, lastUsed, logger);
  const directory = new Directory(db, kv, auth.keyCacheTtlMs, logger);
  const revocations = new JwtRevocations(db, kv, now, logger);
  const jwt = auth.jwt.secret ? new JwtVerifier(auth.jwt.secret, revocations, now, auth.jwt.clockToleranceSeconds) : null;
  return {
    apiKeys,
    directory,
    revocations,
    authenticator: new Authenticator({ apiKeys, directory, jwt, jwtCapabilities: auth.jwt.capabilities, now }),
    jwtEnabled: jwt !== null,
    lastUsed,
  };
}
