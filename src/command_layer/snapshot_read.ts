import { Timestamp } from 'bson';
import { isPlainObject, type Doc } from '../bson/values.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import { withReadView, type ReadView } from './read_view.js';

// A read with readConcern snapshot outside a transaction: the command reads the store as of
// `at` (StorageEngine.snapshotAt), and so do the getMores of a cursor it leaves open, which keeps
// the snapshot until it closes. The reply names the time it read at, as mongod's does: in the
// cursor for find and aggregate, at the top for distinct; the driver's snapshot session reads its
// later commands at that time.
// A majority read (a replica-set member's committed snapshot) reads the same way but names no time.
export function snapshotRead(storage: StorageEngine, at: Timestamp, dispatch: () => Doc | Promise<Doc>, namesTime = true): Doc | Promise<Doc> {
  const snapshot = storage.snapshotAt(at);
  let adopted = false;
  const view: ReadView = {
    run: (fn) => storage.kv.withView(snapshot, fn),
    adopt: () => {
      adopted = true;
      return () => snapshot.release();
    },
  };
  const settle = (reply: Doc): Doc => {
    if (!adopted) snapshot.release();
    return namesTime ? withAtClusterTime(reply, at) : reply;
  };
  let reply: Doc | Promise<Doc>;
  try {
    reply = withReadView(view, dispatch);
  } catch (err) {
    if (!adopted) snapshot.release();
    throw err;
  }
  if (!(reply instanceof Promise)) return settle(reply);
  return reply.then(settle, (err: unknown) => {
    if (!adopted) snapshot.release();
    throw err;
  });
}

// A router's reply to a snapshot read names the time its shards read at (the command's
// atClusterTime, the router's pick when the client gave none).
export function withSnapshotTime(cmd: Doc, reply: Doc): Doc {
  const rc = cmd.readConcern;
  if (cmd.autocommit === false || !isPlainObject(rc) || rc.level !== 'snapshot' || !(rc.atClusterTime instanceof Timestamp)) return reply;
  return withAtClusterTime(reply, rc.atClusterTime);
}

function withAtClusterTime(reply: Doc, at: Timestamp): Doc {
  if (reply.ok !== 1) return reply;
  if (isPlainObject(reply.cursor)) return { ...reply, cursor: { ...reply.cursor, atClusterTime: at } };
  return { ...reply, atClusterTime: at };
}
