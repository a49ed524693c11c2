import pino, { type Logger } from 'pino';

// Secrets never reach a log line: the Authorization header, tokens, secrets, passwords and codes are
// redacted wherever they appear, and access-log lines are built from an allow-list of fields.
export const REDACT = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.token',
  '*.access_token',
  '*.client_secret',
  '*.secret',
  '*.password',
  '*.code',
  '*.code_verifier',
  'token',
  'secret',
  'password',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'couvert' },
      redact: { paths: REDACT, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * The access log: one line per request built from an allow-list of fields (no headers, no bodies), so
 * it skips redaction, which costs more than the line itself on a hot path.
 */
export function createAccessLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    { level, base: { service: 'couvert', log: 'access' }, timestamp: pino.stdTimeFunctions.epochTime },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

export type { Logger };
