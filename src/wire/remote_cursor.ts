import { MongoError } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import type { CommandOptions } from './client.js';
import type { Network } from './network.js';

// Runs a cursor-returning command (find, aggregate, listIndexes, ...) on another node and drains
// it with getMore; an ok: 0 reply becomes the MongoError it describes. `options` go with each
// request (a timeout, say).
export async function fetchAll(client: Network, host: string, db: string, cmd: Doc, options?: CommandOptions): Promise<Doc[]> {
  return drainCursor(client, host, db, checkOk(await client.command(host, db, cmd, options)), options);
}

// Every document of a cursor whose first reply is in hand, fetching the rest with getMore.
export async function drainCursor(client: Network, host: string, db: string, first: Doc, options?: CommandOptions): Promise<Doc[]> {
  const cursor = first.cursor as Doc;
  const out = [...(cursor.firstBatch as Doc[])];
  let id = cursor.id;
  const coll = String(cursor.ns).slice(db.length + 1);
  while (id !== undefined && !isZero(id)) {
    const more = checkOk(await client.command(host, db, { getMore: id, collection: coll }, options));
    const c = more.cursor as Doc;
    out.push(...(c.nextBatch as Doc[]));
    id = c.id;
  }
  return out;
}

function isZero(id: unknown): boolean {
  return typeof id === 'number' ? id === 0 : String(id) === '0';
}

export function checkOk(reply: Doc): Doc {
  if (reply.ok === 1 || reply.ok === true || (typeof reply.ok === 'object' && Number(reply.ok) === 1)) return reply;
  const extra: Doc = {};
  for (const [k, v] of Object.entries(reply)) if (!['ok', 'errmsg', 'code', 'codeName'].includes(k)) extra[k] = v;
  throw new MongoError(typeof reply.code === 'number' ? reply.code : 1, String(reply.errmsg ?? 'remote command failed'), extra,
    Array.isArray(reply.errorLabels) ? reply.errorLabels.map(String) : []);
}

// checkOk, and an ok whose writeConcernError says the write may yet be undone (its primary deposed
// before a majority held it, or the wait timed out) is a failure too: for a write that must stay.
export function checkWriteConcern(reply: Doc): Doc {
  const wce = checkOk(reply).writeConcernError;
  if (typeof wce !== 'object' || wce === null) return reply;
  const { code, errmsg } = wce as Doc;
  throw new MongoError(typeof code === 'number' ? code : 64, String(errmsg ?? 'write concern failed'));
}
