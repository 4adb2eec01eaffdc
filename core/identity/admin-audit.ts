/** Every admin write leaves a row: who (the actor), what (action on a target), when; in the write's transaction. */
import type { Queryable } from '../store/database.ts';

export async function recordAdminWrite(
  tx: Queryable,
  entry: { actor: string; action: string; targetType: string; targetId: string; details?: Record<string, unknown> },
): Promise<void> {
  await tx.query(
    'INSERT INTO admin_audit (actor, action, target_type, target_id, details) VALUES ($1, $2, $3, $4, $5)',
    [entry.actor, entry.action, entry.targetType, entry.targetId, entry.details ? JSON.stringify(entry.details) : null],
  );
}

import type { AdminScope } from '../pipeline/routes.ts';

export type { AdminScope };

export const FULL_ADMIN = (actor: string): AdminScope => ({ actor, tenantId: null });
