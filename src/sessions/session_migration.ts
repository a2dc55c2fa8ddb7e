import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { INCOMPLETE_HISTORY_STMT_ID } from './retryable_write.js';

// What a chunk migration carries of the sessions' retryable writes (MongoDB's
// SessionCatalogMigrationSource and Destination), pure: the donor sends, for each history entry
// of the collection, the statements whose document lies in the moving range, so a retry that
// reaches the recipient after the commit is answered from them. A statement whose document key
// the donor did not keep (the collection was not known sharded when it ran) may belong to the
// range: it goes as a dead end, and the recipient then answers IncompleteTransactionHistory for
// that txnNumber's statements it does not know, never runs one a second time.

// One session's part of an entry, as the donor sends it.
export interface MigratedHistory {
  readonly lsid: Doc;
  readonly txnNum: number;
  readonly stmts: Doc[];
  // The session's last findAndModify image, when a statement sent is that findAndModify.
  readonly image?: Doc;
}

// The statements of a donor history entry that go with the range, or undefined when none does.
export function historyForRange(entry: Doc, inRange: (key: Doc) => boolean): { lsid: Doc; txnNum: number; stmts: Doc[] } | undefined {
  const id = entry._id as Doc;
  const stmts: Doc[] = [];
  let deadEnd = false;
  for (const stmt of (entry.stmts as Doc[] | undefined) ?? []) {
    if (isIncompleteHistoryMarker(stmt)) deadEnd = true;
    else if (!isPlainObject(stmt.key)) deadEnd = true;
    else if (inRange(stmt.key)) stmts.push(stmt);
  }
  if (deadEnd) stmts.push(incompleteHistoryMarker());
  if (stmts.length === 0) return undefined;
  return { lsid: id.lsid as Doc, txnNum: isNumber(id.txnNum) ? toDouble(id.txnNum) : 0, stmts };
}

// Statement ids come back from disk and the wire as any BSON number.
export function isIncompleteHistoryMarker(stmt: Doc): boolean {
  return isNumber(stmt.stmtId) && toDouble(stmt.stmtId) === INCOMPLETE_HISTORY_STMT_ID;
}

// The statement that marks a txnNumber's history as incomplete.
export function incompleteHistoryMarker(): Doc {
  return { stmtId: INCOMPLETE_HISTORY_STMT_ID, op: 'incomplete' };
}

export function migratedHistoryToBSON(h: MigratedHistory): Doc {
  return { lsid: h.lsid, txnNum: h.txnNum, stmts: h.stmts, ...(h.image !== undefined ? { image: h.image } : {}) };
}

export function migratedHistoryFromBSON(raw: Doc): MigratedHistory {
  return {
    lsid: raw.lsid as Doc,
    txnNum: isNumber(raw.txnNum) ? toDouble(raw.txnNum) : 0,
    stmts: Array.isArray(raw.stmts) ? (raw.stmts as Doc[]) : [],
    ...(isPlainObject(raw.image) ? { image: raw.image } : {}),
  };
}
