import { Binary, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import { decodeKeyString, encodeKeyString, KeyStringDecodeError } from './key_string_v1.js';

// MongoDB's resume token: `{_data: <hex KeyString>}` of, in order, the cluster time, the token
// version (2, as MongoDB 7.0 writes), the token type, the index of the event within its
// transaction, whether it is an invalidate's, the collection UUID (null if none) and the event's
// identifier ({operationType, documentKey} or {operationType, operationDescription}). Comparing
// two `_data` strings compares the tokens: by time first, and a high-water mark (type 0, nothing
// after fromInvalidate but the null UUID) sorts before every event (type 128) at its time.

export const TOKEN_VERSION = 2;
export const HIGH_WATER_MARK = 0;
export const EVENT_TOKEN = 128;

export interface ResumeTokenData {
  clusterTime: Timestamp;
  version: number;
  tokenType: typeof HIGH_WATER_MARK | typeof EVENT_TOKEN;
  txnOpIndex: number;
  fromInvalidate: boolean;
  uuid: Binary | undefined;
  eventIdentifier: Doc | undefined;
}

export interface ResumeToken {
  _data: string;
}

export function encodeResumeToken(data: ResumeTokenData): ResumeToken {
  const values: unknown[] = [data.clusterTime, data.version, data.tokenType, data.txnOpIndex, data.fromInvalidate, data.uuid ?? null];
  if (data.eventIdentifier !== undefined) values.push(data.eventIdentifier);
  return { _data: encodeKeyString(values).toString('hex').toUpperCase() };
}

export function highWaterMarkToken(clusterTime: Timestamp): ResumeToken {
  return encodeResumeToken({ clusterTime, version: TOKEN_VERSION, tokenType: HIGH_WATER_MARK, txnOpIndex: 0, fromInvalidate: false, uuid: undefined, eventIdentifier: undefined });
}

export function eventToken(clusterTime: Timestamp, txnOpIndex: number, uuid: Binary | undefined, eventIdentifier: Doc, fromInvalidate = false): ResumeToken {
  return encodeResumeToken({ clusterTime, version: TOKEN_VERSION, tokenType: EVENT_TOKEN, txnOpIndex, fromInvalidate, uuid, eventIdentifier });
}

// The event identifier of a version-2 token: the operation type and the document key of a CRUD
// event, or its description for any other.
export function eventIdentifier(operationType: string, documentKey: Doc | undefined, operationDescription?: Doc): Doc {
  if (documentKey !== undefined) return { operationType, documentKey };
  return operationDescription === undefined ? { operationType } : { operationType, operationDescription };
}

// A resumeAfter or startAfter value read as MongoDB reads it, with its codes for each fault.
export function decodeResumeToken(token: unknown): ResumeTokenData {
  if (!isPlainObject(token) || typeof token._data !== 'string') {
    throw new MongoError(40647, `Bad resume token: _data of missing or of wrong type. Expected string, got ${JSON.stringify(token)}`);
  }
  const typeBits = token._typeBits;
  if (typeBits !== undefined && !(typeBits instanceof Binary && typeBits.sub_type === 0)) {
    throw new MongoError(40648, `Bad resume token: _typeBits of wrong type ${JSON.stringify(token)}`);
  }
  const hex = token._data;
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new MongoError(ErrorCodes.FailedToParse, 'resume token string was not a valid hex string');
  let values: unknown[];
  try {
    values = decodeKeyString(Buffer.from(hex, 'hex'));
  } catch (err) {
    if (!(err instanceof KeyStringDecodeError)) throw err;
    throw new MongoError(ErrorCodes.FailedToParse, `invalid resume token: ${err.message}`);
  }
  const [clusterTime, version, tokenType, txnOpIndex, fromInvalidate, uuid, identifier, ...rest] = values;
  if (values.length === 0) throw new MongoError(40649, 'invalid empty resume token');
  if (!(clusterTime instanceof Timestamp)) throw new MongoError(ErrorCodes.FailedToParse, 'invalid resume token: the cluster time is not a timestamp');
  if (version === undefined) throw new MongoError(50796, 'Resume Token does not contain version');
  if (typeof version !== 'number') throw new MongoError(50854, 'Invalid resume token: wrong type for version');
  if (version !== 0 && version !== 1 && version !== 2) throw new MongoError(50795, 'Invalid Resume Token: only supports version 0, 1 and 2');
  if (version < 1) throw new MongoError(ErrorCodes.InvalidResumeToken, 'Resume tokens of version 0 are not supported');
  if (values.length < 3) throw new MongoError(51055, 'Resume Token does not contain tokenType');
  if (typeof tokenType !== 'number') throw new MongoError(51056, 'Resume Token tokenType is not an int.');
  if (tokenType !== EVENT_TOKEN && tokenType !== HIGH_WATER_MARK) throw new MongoError(51057, `Token type ${tokenType} not recognized`);
  if (values.length < 4) throw new MongoError(50793, 'Resume Token does not contain txnOpIndex');
  if (typeof txnOpIndex !== 'number' || !Number.isInteger(txnOpIndex)) throw new MongoError(50855, 'Resume Token txnOpIndex is not an integer');
  if (txnOpIndex < 0) throw new MongoError(50794, 'Invalid Resume Token: txnOpIndex should be non-negative');
  if (values.length < 5) throw new MongoError(50872, 'Resume Token does not contain fromInvalidate');
  if (typeof fromInvalidate !== 'boolean') throw new MongoError(50870, 'Resume Token fromInvalidate is not a boolean.');
  const data: ResumeTokenData = { clusterTime, version, tokenType, txnOpIndex, fromInvalidate, uuid: undefined, eventIdentifier: undefined };
  if (values.length < 6) {
    if (version >= 2) throw new MongoError(6189500, 'Expected UUID or null');
    return data;
  }
  if (uuid !== null) {
    if (!(uuid instanceof Binary) || uuid.sub_type !== Binary.SUBTYPE_UUID || uuid.position !== 16) throw new MongoError(ErrorCodes.FailedToParse, 'Invalid UUID in resume token');
    data.uuid = uuid;
  }
  if (tokenType === HIGH_WATER_MARK && values.length > 6) throw new MongoError(6189504, 'Invalid high water mark token');
  if (values.length < 7) {
    if (tokenType === EVENT_TOKEN && version >= 2) throw new MongoError(6189501, 'Expected an eventIdentifier for an event resume token');
    return data;
  }
  if (!isPlainObject(identifier)) throw new MongoError(6189503, 'Resume Token eventIdentifier is not an object');
  data.eventIdentifier = identifier;
  if (rest.length > (version >= 2 ? 1 : 0)) throw new MongoError(40646, 'invalid oversized resume token');
  return data;
}

export function isHighWaterMark(data: ResumeTokenData): boolean {
  return data.tokenType === HIGH_WATER_MARK;
}

// The order of two tokens, as MongoDB's resume logic and a router's merge compare them.
export function compareTokens(a: ResumeToken, b: ResumeToken): number {
  return a._data < b._data ? -1 : a._data > b._data ? 1 : 0;
}
