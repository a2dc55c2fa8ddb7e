import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

const RECENT_LINES_MAX = 1024;

// JSON lines on stdout (pino), plus the most recent lines kept for the getLog command.
export function createLogger(name: string): { logger: Logger; recent: string[] } {
  const recent: string[] = [];
  const ring = new Writable({
    write(chunk: Buffer, _enc, done) {
      recent.push(chunk.toString('utf8').trimEnd());
      if (recent.length > RECENT_LINES_MAX) recent.shift();
      done();
    },
  });
  const level = process.env.DOCSHARD_LOG_LEVEL ?? 'info';
  // The logger's level decides what is logged, and setParameter's logLevel changes it at runtime:
  // the streams take every line they are given.
  const logger = pino({ name, level, base: { pid: process.pid } }, pino.multistream([{ stream: process.stdout, level: 'trace' }, { stream: ring, level: 'trace' }]));
  return { logger, recent };
}
