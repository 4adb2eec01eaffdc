/**
 * At most one log line per interval for an event that can happen hundreds of times a second (a store failing, a
 * connection cap reached): the line that does go out says how many events it stands for.
 */
export class LogThrottle {
  private lastAt = -Infinity;
  private skipped = 0;

  constructor(private readonly intervalMs: number, private readonly now: () => number = () => performance.now()) {}

  /** For one event: how many events the line due now stands for (this one included), or null when none is due. */
  due(): number | null {
    const at = this.now();
    if (at - this.lastAt < this.intervalMs) {
      this.skipped++;
      return null;
    }
    this.lastAt = at;
    const events = this.skipped + 1;
    this.skipped = 0;
    return events;
  }
}
