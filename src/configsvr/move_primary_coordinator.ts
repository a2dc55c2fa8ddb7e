import { ObjectId } from 'bson';
import type { Logger } from 'pino';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { compareValues } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import type { CollectionType, DatabaseType } from '../catalog/type_chunk.js';
import { changeLogEntry, CONFIG_SHARD } from '../configsvr_decisions/changelog.js';
import {
  checkNoOrphans, collectionsToClone, commitMovePrimary, decideMovePrimary, MOVE_PRIMARY_COORDINATOR_NS, recoveryAction,
  type MovePrimaryCoordinatorDoc,
} from '../configsvr_decisions/move_primary.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { WireClient } from '../wire/client.js';
import { checkOk, fetchAll } from '../wire/remote_cursor.js';
import type { ShardingCatalogManager } from './sharding_catalog_manager.js';

export interface CoordinatorHooks {
  // Pauses at a named step while a test's fail point is on.
  hang(failPoint: string): Promise<void>;
}

// Fail points, on the config server.
export const MOVE_PRIMARY_FAIL_POINTS = {
  beforeCloning: 'movePrimaryHangBeforeCloning',
  beforeCommit: 'movePrimaryHangBeforeCommit',
  afterCommit: 'movePrimaryHangAfterCommit',
} as const;

// How long a request keeps retrying the clean-up after a commit or an abort before it answers
// and leaves the rest to a background retry; and how long that retry keeps going.
const FOREGROUND_CLEANUP_MS = 30_000;
const BACKGROUND_CLEANUP_MS = 10 * 60_000;

interface InFlight {
  to: string;
  recovery: boolean;
  promise: Promise<void>;
}

// movePrimary, coordinated by the config server (7.0 runs a MovePrimaryCoordinator on the donor;
// the phases and their order are the same):
//   clone   persist {phase: clone}; donor blocks writes (database critical section, persisted on
//           the donor); list the donor's unsharded collections, check the recipient holds none
//           (persist the list); the recipient copies them (options, UUID, indexes, documents);
//           donor blocks reads too.
//   commit  one local write unit: config.databases names the recipient with lastMod + 1, and the
//           state document moves to {phase: clean}.
//   clean   drop the copies on the donor; recipient reloads its database version; donor reloads
//           its version and releases the section (held requests then get StaleDbVersion); delete
//           the state document.
// A failure before the commit aborts: the recipient's copies are dropped and the donor released.
// A config server that restarts finds the state document and aborts (clone, abort) or finishes
// (clean) the move.
export class MovePrimaryCoordinator {
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    private readonly local: LocalCollections,
    private readonly client: WireClient,
    private readonly catalog: ShardingCatalogManager,
    private readonly selfHost: string,
    private readonly logger: Logger,
    private readonly hooks: CoordinatorHooks,
  ) {}

  async movePrimary(db: string, to: string): Promise<void> {
    for (;;) {
      const flight = this.inFlight.get(db);
      if (flight?.recovery) {
        await flight.promise.catch(() => undefined);
        if (this.inFlight.get(db) === flight) this.inFlight.delete(db);
        continue;
      }
      if (flight === undefined) {
        const leftover = this.stateDoc(db);
        if (leftover !== undefined) {
          // A move that a crash or an unreachable shard left unsettled: settle it first.
          await this.track(db, leftover.to, true, () => this.settle(leftover, FOREGROUND_CLEANUP_MS));
          continue;
        }
      }
      const database = this.database(db);
      const decision = decideMovePrimary({ db, to, database, shards: this.catalog.shards(), inProgress: flight && { to: flight.to } });
      if (decision.kind === 'noop') {
        this.logger.info({ c: 'SHARDING', db, to }, 'Database already on requested primary shard');
        return;
      }
      if (decision.kind === 'join') return flight!.promise;
      return this.track(db, to, false, () => this.run(db, decision.from, decision.to, database!));
    }
  }

  // Startup of the config server: settle every move a crash interrupted, in the background.
  recover(): void {
    for (const doc of this.local.find(MOVE_PRIMARY_COORDINATOR_NS) as unknown as MovePrimaryCoordinatorDoc[]) {
      this.logger.info({ c: 'SHARDING', db: doc._id, from: doc.from, to: doc.to, phase: doc.phase, action: recoveryAction(doc) }, 'Recovering movePrimary');
      this.track(doc._id, doc.to, true, () => this.settle(doc, BACKGROUND_CLEANUP_MS)).catch((err: unknown) => {
        this.logger.error({ c: 'SHARDING', db: doc._id, err }, 'movePrimary recovery failed; the next movePrimary of this database or a restart retries it');
      });
    }
  }

  private track(db: string, to: string, recovery: boolean, fn: () => Promise<void>): Promise<void> {
    const promise = fn();
    const flight: InFlight = { to, recovery, promise };
    this.inFlight.set(db, flight);
    const done = (): void => {
      if (this.inFlight.get(db) === flight) this.inFlight.delete(db);
    };
    promise.then(done, done);
    return promise;
  }

  private async run(db: string, from: string, to: string, database: DatabaseType): Promise<void> {
    const doc: MovePrimaryCoordinatorDoc = { _id: db, from, to, phase: 'clone', reason: new ObjectId(), preCommitVersion: database.version };
    this.local.write((w) => {
      w.insert(MOVE_PRIMARY_COORDINATOR_NS, doc as unknown as Doc);
      w.insert('config.changelog', this.entry('movePrimary.start', db, { from, to }));
    });
    this.logger.info({ c: 'SHARDING', db, from, to }, 'Running movePrimary operation');
    try {
      await this.clone(doc);
      await this.hooks.hang(MOVE_PRIMARY_FAIL_POINTS.beforeCommit);
      this.commit(db);
    } catch (err) {
      this.logger.warn({ c: 'SHARDING', db, from, to, err }, 'movePrimary failed before its commit; aborting');
      await this.abortOrLeave(db, err, FOREGROUND_CLEANUP_MS);
      throw err;
    }
    await this.hooks.hang(MOVE_PRIMARY_FAIL_POINTS.afterCommit);
    try {
      await this.finish(this.stateDoc(db)!, FOREGROUND_CLEANUP_MS);
    } catch (err) {
      // Committed: the move stands. The clean-up goes on in the background.
      this.logger.warn({ c: 'SHARDING', db, err }, 'movePrimary committed but its clean-up failed; retrying in the background');
      this.recoverOne(db);
    }
  }

  private async clone(doc: MovePrimaryCoordinatorDoc): Promise<void> {
    const { _id: db, from, to } = doc;
    const reason = doc.reason.toHexString();
    const donor = this.catalog.shard(from).host;
    const recipient = this.catalog.shard(to).host;
    checkOk(await this.client.command(donor, 'admin', { _shardsvrMovePrimaryEnterCriticalSection: db, reason }));
    // The donor may have waited for a DDL of the database to end (its DDL lock): a database
    // dropped, re-created or moved meanwhile is not the one this move was decided on.
    const now = this.database(db);
    if (now === undefined || now.primary !== from || compareValues(now.version, doc.preCommitVersion) !== 0) {
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `database ${db} changed while movePrimary waited for it; nothing was moved`);
    }
    const listed = await fetchAll(this.client, donor, db, { listCollections: 1 });
    const { unsharded, sharded } = collectionsToClone(listed, this.shardedCollections(db));
    const onRecipient = await fetchAll(this.client, recipient, db, { listCollections: 1, nameOnly: true });
    checkNoOrphans(db, to, unsharded, onRecipient.map((c) => String(c.name)));
    this.local.write((w) => w.update(MOVE_PRIMARY_COORDINATOR_NS, { _id: db }, { $set: { collections: unsharded, shardedCollections: sharded } }));
    await this.hooks.hang(MOVE_PRIMARY_FAIL_POINTS.beforeCloning);
    const reply = checkOk(await this.client.command(recipient, 'admin', {
      _shardsvrCloneCatalogData: db, from: donor, collections: unsharded, shardedCollections: sharded,
    }));
    const cloned = (reply.clonedColls as unknown[]).map(String).sort();
    const expected = unsharded.map((c) => `${db}.${c}`).sort();
    if (cloned.join('\n') !== expected.join('\n')) {
      throw new MongoError(ErrorCodes.OperationFailed, "Error cloning data in movePrimary: the list of actually cloned collections doesn't match the list of collections to clone");
    }
    checkOk(await this.client.command(donor, 'admin', { _shardsvrMovePrimaryEnterCriticalSection: db, reason, blockReads: true }));
  }

  // The commit and the state change to `clean` are one write unit: after a crash the state
  // document alone says whether the move happened.
  private commit(db: string): void {
    const doc = this.stateDoc(db)!;
    const committed = commitMovePrimary(this.database(db), doc);
    this.local.write((w) => {
      w.update('config.databases', { _id: db }, committed as unknown as Doc);
      w.update(MOVE_PRIMARY_COORDINATOR_NS, { _id: db }, { $set: { phase: 'clean' } });
      w.insert('config.changelog', this.entry('movePrimary.commit', db, { from: doc.from, to: doc.to }));
    });
    this.logger.info({ c: 'SHARDING', db, from: doc.from, to: doc.to, version: committed.version }, 'movePrimary committed');
  }

  // An abort is persisted before it starts: a donor still waiting to enter its critical section
  // for this move then refuses to.
  private settle(doc: MovePrimaryCoordinatorDoc, budgetMs: number): Promise<void> {
    if (recoveryAction(doc) === 'finish') return this.finish(doc, budgetMs);
    if (doc.phase !== 'abort') this.local.write((w) => w.update(MOVE_PRIMARY_COORDINATOR_NS, { _id: doc._id }, { $set: { phase: 'abort' } }));
    return this.abort(doc, doc.error ?? 'interrupted by a config server restart', budgetMs);
  }

  // Settles the database's state document in the background, once the run that left it is over.
  private recoverOne(db: string): void {
    const start = (): void => {
      const doc = this.stateDoc(db);
      if (doc === undefined || this.inFlight.has(db)) return;
      this.track(db, doc.to, true, () => this.settle(doc, BACKGROUND_CLEANUP_MS)).catch((err: unknown) => {
        this.logger.error({ c: 'SHARDING', db, err }, 'movePrimary clean-up failed; the next movePrimary of this database or a restart retries it');
      });
    };
    const current = this.inFlight.get(db);
    if (current) current.promise.then(start, start);
    else start();
  }

  private async abortOrLeave(db: string, err: unknown, budgetMs: number): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    this.local.write((w) => w.update(MOVE_PRIMARY_COORDINATOR_NS, { _id: db }, { $set: { phase: 'abort', error: message } }));
    const doc = this.stateDoc(db)!;
    try {
      await this.abort(doc, message, budgetMs);
    } catch (cleanupErr) {
      this.logger.warn({ c: 'SHARDING', db, err: cleanupErr }, 'movePrimary abort clean-up failed; retrying in the background');
      this.recoverOne(db);
    }
  }

  // Undo a move that did not commit: the recipient's copies go, the donor is released.
  private async abort(doc: MovePrimaryCoordinatorDoc, error: string, budgetMs: number): Promise<void> {
    const { _id: db, from, to } = doc;
    await retrying(budgetMs, async () => {
      const recipient = this.hostOf(to);
      if (recipient !== undefined) for (const name of doc.collections ?? []) await dropIfExists(this.client, recipient, db, name);
      const donor = this.hostOf(from);
      if (donor !== undefined) checkOk(await this.client.command(donor, 'admin', { _shardsvrMovePrimaryExitCriticalSection: db, reason: doc.reason.toHexString() }));
    });
    this.local.write((w) => {
      w.delete(MOVE_PRIMARY_COORDINATOR_NS, { _id: db });
      w.insert('config.changelog', this.entry('movePrimary.error', db, { from, to, error }));
    });
    this.logger.info({ c: 'SHARDING', db, from, to }, 'movePrimary aborted');
  }

  // Finish a committed move: the donor's copies go, both shards reload the database version, the
  // donor releases its section.
  private async finish(doc: MovePrimaryCoordinatorDoc, budgetMs: number): Promise<void> {
    const { _id: db, from, to } = doc;
    await retrying(budgetMs, async () => {
      const donor = this.hostOf(from);
      if (donor !== undefined) for (const name of doc.collections ?? []) if (!this.ownsChunks(from, `${db}.${name}`)) await dropIfExists(this.client, donor, db, name);
      const recipient = this.hostOf(to);
      if (recipient !== undefined) checkOk(await this.client.command(recipient, 'admin', { _flushDatabaseCacheUpdates: db }));
      if (donor !== undefined) checkOk(await this.client.command(donor, 'admin', { _shardsvrMovePrimaryExitCriticalSection: db, reason: doc.reason.toHexString() }));
    });
    this.local.write((w) => {
      w.delete(MOVE_PRIMARY_COORDINATOR_NS, { _id: db });
      w.insert('config.changelog', this.entry('movePrimary.end', db, { from, to }));
    });
    this.logger.info({ c: 'SHARDING', db, from, to }, 'Completed movePrimary operation');
  }

  // The new primary takes DDLs as soon as the move commits: a collection moved unsharded may be
  // sharded already with chunks on the donor, whose copy (same UUID) is then no leftover.
  private ownsChunks(shard: string, ns: string): boolean {
    const collection = this.catalog.collection(ns);
    return collection !== undefined && this.catalog.chunks(collection.uuid).some((c) => c.shard === shard);
  }

  private stateDoc(db: string): MovePrimaryCoordinatorDoc | undefined {
    return this.local.findOne(MOVE_PRIMARY_COORDINATOR_NS, { _id: db }) as unknown as MovePrimaryCoordinatorDoc | undefined;
  }

  private database(db: string): DatabaseType | undefined {
    return this.local.findOne('config.databases', { _id: db }) as unknown as DatabaseType | undefined;
  }

  private shardedCollections(db: string): string[] {
    const prefix = `${db}.`;
    return (this.local.find('config.collections') as unknown as CollectionType[]).filter((c) => c._id.startsWith(prefix)).map((c) => c._id.slice(prefix.length));
  }

  // A shard removed since has nothing left to clean.
  private hostOf(shardId: string): string | undefined {
    return this.catalog.shards().find((s) => s._id === shardId)?.host;
  }

  private entry(what: string, ns: string, details: Doc): Doc {
    return changeLogEntry({ server: this.selfHost, clientAddr: '', time: new Date(), newId: () => new ObjectId() }, CONFIG_SHARD, what, ns, details);
  }
}

async function dropIfExists(client: WireClient, host: string, db: string, coll: string): Promise<void> {
  const reply = await client.command(host, db, { drop: coll });
  if (reply.ok !== 1 && reply.code !== ErrorCodes.NamespaceNotFound) checkOk(reply);
}

// Retries `fn` with a growing pause (up to 1 s) until it succeeds or `budgetMs` has passed; a
// closed client (shutdown) stops at once.
async function retrying(budgetMs: number, fn: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + budgetMs;
  for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
    try {
      return await fn();
    } catch (err) {
      if ((err instanceof MongoError && err.code === ErrorCodes.ShutdownInProgress) || Date.now() + pause > deadline) throw err;
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}
