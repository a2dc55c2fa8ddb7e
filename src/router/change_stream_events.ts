import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import { decodeResumeToken } from '../change_streams/resume_token.js';

const NON_RESUMABLE = ['NonResumableChangeStreamError'];

// What the router does to the merged events before a client sees them (pure): the shards were
// started at a resume token's time, so the events up to the token are passed over, and the token's
// own event must be among them (as MongoDB's router checks that it is present); a DDL event that
// several shards logged (the drop of a sharded collection, a dropDatabase) is shown once.
export class RouterEventFilter {
  private resumeFound: boolean;
  // The DDL events shown, by kind, namespace and collection, until the namespace has another event.
  private readonly shownDDL = new Set<string>();

  // `resumeToken`: the `_data` events must come after; `mustFind`, whether it is an event's token.
  // A startAfter an invalidate also passes over the other shards' drops of that collection.
  constructor(private readonly resumeToken: string | undefined, mustFind: boolean) {
    this.resumeFound = !mustFind;
    if (resumeToken !== undefined && decodeResumeToken({ _data: resumeToken }).fromInvalidate) this.invalidated = collectionOf(resumeToken);
  }

  private readonly invalidated: string | undefined;

  // Whether `event` (token `token`) is shown.
  admit(event: Doc, token: string): boolean {
    if (this.resumeToken !== undefined) {
      if (token === this.resumeToken) this.resumeFound = true;
      if (token <= this.resumeToken) return false;
      if (!this.resumeFound) throw tokenNotFound(this.resumeToken);
    }
    const op = String(event.operationType);
    const ns = isPlainObject(event.ns) ? event.ns : {};
    const where = `${String(ns.db)}.${ns.coll === undefined ? '' : String(ns.coll)}`;
    if (!DDL.has(op)) {
      this.forget(where);
      return true;
    }
    const uuid = collectionOf(token);
    if (uuid === this.invalidated && op !== 'dropDatabase') return false;
    const key = `${op}|${where}|${uuid}`;
    if (this.shownDDL.has(key)) return false;
    this.shownDDL.add(key);
    return true;
  }

  // Once the promise of every shard is past the token, a token never seen is not coming.
  checkPassed(promised: string): void {
    if (this.resumeToken !== undefined && !this.resumeFound && promised > this.resumeToken) throw tokenNotFound(this.resumeToken);
  }

  private forget(where: string): void {
    const db = where.slice(0, where.indexOf('.') + 1);
    for (const key of this.shownDDL) {
      const [, ns] = key.split('|');
      if (ns === where || ns === db) this.shownDDL.delete(key);
    }
  }
}

const DDL = new Set(['drop', 'rename', 'dropDatabase', 'invalidate']);

// The collection UUID of an event's token: the same on every shard of a sharded collection, and
// different for the next collection of the name.
function collectionOf(token: string): string {
  return decodeResumeToken({ _data: token }).uuid?.toString('hex') ?? '';
}

function tokenNotFound(token: string): MongoError {
  return new MongoError(ErrorCodes.ChangeStreamFatalError, `cannot resume stream; the resume token was not found. {_data: "${token}"}`, {}, NON_RESUMABLE);
}
