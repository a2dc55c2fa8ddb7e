import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';

// The namespaces configureQueryAnalyzer and analyzeShardKey refuse before anything is read, as
// MongoDB's analyze_shard_key::validateNamespace: the internal databases, system collections and
// the state collections of queryable encryption, with IllegalOperation.
export function validateAnalyzedNamespace(ns: string): { db: string; coll: string } {
  const dot = ns.indexOf('.');
  if (dot <= 0 || dot === ns.length - 1) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${ns}'`);
  const db = ns.slice(0, dot);
  const coll = ns.slice(dot + 1);
  if (db === 'config' || db === 'local' || db === 'admin') {
    throw new MongoError(ErrorCodes.IllegalOperation, `Cannot run against a collection in the '${db}' database`);
  }
  if (coll.startsWith('system.')) throw new MongoError(ErrorCodes.IllegalOperation, 'Cannot run against an internal collection');
  if (/^enxcol_\..*\.(esc|ecc|ecoc)$/.test(coll)) throw new MongoError(ErrorCodes.IllegalOperation, 'Cannot run against an internal collection');
  return { db, coll };
}
