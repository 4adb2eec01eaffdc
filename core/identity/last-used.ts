/**
 * When each key was last used, kept without a database write per request: uses are noted in memory and written
 * in one multi-row UPDATE per interval (and at shutdown). A failed write keeps its entries for the next one.
 */
import type { Database } from '../store/database.ts';

export class LastUsedRecorder {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(private readonly db: Database, private readonly intervalMs: number, private readonly onError: (err: unknown) => void) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush().catch(this.onError), this.intervalMs);
    this.timer.unref();
  }

  record(keyId: string, at: number): void {
    const known = this.pending.get(keyId);
    if (known === undefined || at > known) this.pending.set(keyId, at);
  }

  /** Writes what is pending; concurrent calls share one write. */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flushing?.catch(() => {});
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      // GREATEST keeps a newer time written by another instance.
      await this.db.query(
        `UPDATE api_keys AS k SET last_used_at = GREATEST(k.last_used_at, u.at)
         FROM unnest($1::text[], $2::timestamptz[]) AS u(id, at) WHERE k.id = u.id`,
        [[...batch.keys()], [...batch.values()].map((ms) => new Date(ms).toISOString())],
      );
    } catch (err) {
      for (const [id, at] of batch) this.record(id, at);
      throw err;
    }
  }
}
