import { writeSync } from 'node:fs';
import { destination, pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Lines that arrive within this long of a write go out together in one write. */
const COALESCE_MS = 50;
/** ...or as soon as this many bytes wait. */
const COALESCE_BYTES = 64 * 1024;

interface Sink {
  write(text: string): unknown;
  /** Starts writing what it holds, then calls back (sonic-boom: at once when it buffers nothing itself). */
  flush(callback: (err?: Error) => void): void;
  /** Writes what it has queued before returning (sonic-boom: not a write already in flight on the thread pool). */
  flushSync(): void;
}

const STDOUT = 1;

/** Up to this many 1 ms waits for a full pipe to take the lines held at exit. */
const EXIT_WRITE_WAITS = 1000;

/** Writes all of `text` to `fd` before returning, waiting out a full non-blocking pipe (EAGAIN). */
export function writeAllSync(fd: number, text: string): void {
  let rest = Buffer.from(text);
  let waits = 0;
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(fd, rest));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || ++waits > EXIT_WRITE_WAITS) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

/**
 * Under load the access log writes a line per request, and each write is a system call (plus a hop to libuv's
 * thread pool): about 4% of the gateway's busy time with an empty pipeline. A line that comes after a quiet spell is
 * written at once; the lines that follow within COALESCE_MS are held and written together when it ends. Whatever
 * is held is written synchronously when the process exits.
 */
export class CoalescedLines implements DestinationStream {
  private held: string[] = [];
  private heldBytes = 0;
  private timer: NodeJS.Timeout | undefined;

  /**
   * `writeSync`: how flushSync writes the held lines, done when it returns. Passed through the sink's write instead,
   * they would start an asynchronous write that an exiting process may never finish (sonic-boom's flushSync leaves
   * a write in flight alone): about half the runs of a script that logged a burst and ran out of work lost it.
   */
  constructor(private readonly sink: Sink, private readonly writeSync: (text: string) => void) {}

  write(line: string): void {
    if (this.timer === undefined) {
      this.sink.write(line);
      this.arm();
      return;
    }
    this.held.push(line);
    this.heldBytes += line.length;
    if (this.heldBytes >= COALESCE_BYTES) this.release();
  }

  /** Passes what is held to the sink now, then the sink's flush (pino's logger.flush(callback)). */
  flush(callback?: (err?: Error) => void): void {
    this.release();
    if (callback) this.sink.flush(callback);
  }

  /** What the sink still has queued, then what is held, written before this returns. */
  flushSync(): void {
    const text = this.take();
    this.sink.flushSync();
    if (text !== '') this.writeSync(text);
  }

  private arm(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // Lines came during the spell: write them, and hold the next ones for another spell.
      if (this.held.length > 0) {
        this.release();
        this.arm();
      }
    }, COALESCE_MS);
    this.timer.unref();
  }

  private release(): void {
    const text = this.take();
    if (text !== '') this.sink.write(text);
  }

  /** The held lines as one text ('' when none), no longer held. */
  private take(): string {
    if (this.held.length === 0) return '';
    const text = this.held.length === 1 ? this.held[0]! : this.held.join('');
    this.held = [];
    this.heldBytes = 0;
    return text;
  }
}

export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  // Asynchronous stdout: lines that arrive while a write is in flight go out together in the next one, off the
  // event loop, and a stalled reader of stdout never blocks the gateway. At exit the hook below writes synchronously
  // what that stream still has queued, then the lines held here; a write already in flight on the thread pool when
  // the process exits may be cut, as with any asynchronous stdout.
  const stdout = destination({ dest: STDOUT, sync: false });
  const lines = new CoalescedLines(stdout, (text) => writeAllSync(STDOUT, text));
  process.once('exit', () => {
    try {
      lines.flushSync();
    } catch {
      // stdout closed or not open yet: nothing more can be written.
    }
  });
  return pino({
    name: options.name ?? 'aigw',
    level: options.level ?? process.env.AIGW_LOG_LEVEL ?? 'info',
    // Secrets must never reach a log line, whichever plugin logs the request.
    redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'apiKey', 'key'],
  }, lines);
}

/** A logger that drops everything: for tests and for CLI commands that print their own output. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
