/** Bearer credentials as every entrance reads them: the data plane, the admin API and /metrics. */
import { createHash, timingSafeEqual } from 'node:crypto';

/** The token of an `Authorization: Bearer <token>` header; undefined when absent or of another form. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
}

/** A configured secret kept as its SHA-256: every comparison is of equal lengths, whatever was presented. */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** Whether `presented` is the secret of `digest`, in the same time whatever it is. */
export function matchesSecret(presented: string, digest: Buffer): boolean {
  return timingSafeEqual(secretDigest(presented), digest);
}
