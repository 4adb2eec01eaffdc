/** The logging interface the gateway hands out (pino satisfies it): plugins and helpers depend on this, not on pino. */
export interface LogFn {
  (context: object, message?: string): void;
  (message: string): void;
}

export interface Log {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}
