import { destination, pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: options.name ?? 'aigw',
    level: options.level ?? process.env.AIGW_LOG_LEVEL ?? 'info',
    // Secrets must never reach a log line, whichever plugin logs the request.
    redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'apiKey', 'key'],
    // Asynchronous stdout: lines that arrive while a write is in flight go out together in the next one, off
    // the event loop, instead of one blocking write per line (the access log writes one per request). Lines
    // still buffered are flushed synchronously when the process exits.
  }, destination({ dest: 1, sync: false }));
}

/** A logger that drops everything: for tests and for CLI commands that print their own output. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
