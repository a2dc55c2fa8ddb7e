import type { Logger } from 'pino';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isNumber, toDouble, type Doc } from '../bson/values.js';

// The logLevel server parameter, as MongoDB's verbosity: 0 logs what it always logs, 1 adds the
// debug lines, 2 and above everything (pino's info, debug and trace). Set at runtime with
// setParameter, on nodes and routers alike.
export function logLevelOf(logger: Logger): number {
  switch (logger.level) {
    case 'debug': return 1;
    case 'trace': return 2;
    default: return 0;
  }
}

// {setParameter: 1, logLevel: n}: the only parameter docshard changes at runtime; a known one it
// does not (`known`) is refused as fixed at startup, an unknown one as unrecognized.
export function setParameter(logger: Logger, cmd: Doc, known: (name: string) => boolean): Doc {
  const names = Object.keys(cmd).filter((k) => k !== 'setParameter' && !k.startsWith('$') && k !== 'lsid' && k !== 'comment');
  if (names.length === 0) throw new MongoError(ErrorCodes.InvalidOptions, 'no option found to set, use help:true to see options');
  for (const name of names) {
    if (name === 'logLevel') continue;
    if (known(name)) throw new MongoError(ErrorCodes.IllegalOperation, `parameter ${name} can only be set at startup`);
    throw new MongoError(ErrorCodes.InvalidOptions, `attempted to set unrecognized parameter [${name}], use help:true to see options`);
  }
  const value = cmd.logLevel;
  if (!isNumber(value) || !Number.isInteger(toDouble(value)) || toDouble(value) < 0 || toDouble(value) > 5) {
    throw new MongoError(ErrorCodes.BadValue, 'logLevel takes an integer from 0 to 5');
  }
  const was = logLevelOf(logger);
  const verbosity = toDouble(value);
  logger.level = verbosity === 0 ? 'info' : verbosity === 1 ? 'debug' : 'trace';
  logger.info({ c: 'CONTROL', logLevel: verbosity, was }, 'Set the logLevel parameter');
  return { was, ok: 1 };
}
