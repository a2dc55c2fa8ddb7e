import type { ClientSession, MongoClient } from 'mongodb';
import type { EntityMap } from './entities.js';
import { countMatchingEvents } from './expected_events.js';
import type { TestFailPoints } from './fail_point_operations.js';
import { matchExactly, show } from './unified_matcher.js';
import type { Doc, EntityDescription, Operation } from './test_file.js';
import { pinnedMongos, transactionState } from './transactions.js';

// Special operations (object: testRunner). Assertions about the server's catalog go through the
// internal client, so they do not show up among a test client's events.

export interface RunnerContext {
  entities: EntityMap;
  internal: MongoClient;
  failPoints: TestFailPoints;
  createEntity(description: EntityDescription): Promise<void>;
  /** One operation with its assertions, as the test's own operations run. */
  runOperation(op: Operation): Promise<void>;
}

type SpecialOperation = (args: Doc, ctx: RunnerContext) => Promise<void>;

async function collectionExists(ctx: RunnerContext, args: Doc): Promise<boolean> {
  const names = await ctx.internal.db(args.databaseName as string).listCollections({ name: args.collectionName as string }, { nameOnly: true }).toArray();
  return names.length > 0;
}

async function indexExists(ctx: RunnerContext, args: Doc): Promise<boolean> {
  const collection = ctx.internal.db(args.databaseName as string).collection(args.collectionName as string);
  try {
    const indexes = await collection.listIndexes().toArray();
    return indexes.some((i) => i.name === args.indexName);
  } catch (err) {
    if ((err as { code?: number }).code === 26) return false; // NamespaceNotFound: no collection, no index
    throw err;
  }
}

function lastTwoLsids(ctx: RunnerContext, args: Doc): [unknown, unknown] {
  const lsids = ctx.entities.get(args.client as string, 'client').lsids;
  if (lsids.length < 2) throw new Error(`client ${String(args.client)} sent fewer than two commands`);
  return [lsids[lsids.length - 2], lsids[lsids.length - 1]];
}

function sessionOf(ctx: RunnerContext, args: Doc): ClientSession {
  return ctx.entities.get(args.session as string, 'session').session;
}

/** The driver keeps the dirty flag on its internal server session. */
function sessionIsDirty(ctx: RunnerContext, args: Doc): boolean {
  const session = sessionOf(ctx, args) as unknown as { serverSession?: { isDirty?: boolean } };
  return session.serverSession?.isDirty === true;
}

// The format asks runners to wait at least 10 seconds; a busy machine gets a little more.
const WAIT_FOR_EVENT_MS = 15_000;
const EVENT_POLL_MS = 50;

function matchingEvents(ctx: RunnerContext, args: Doc): number {
  return countMatchingEvents(args.event as Doc, ctx.entities.get(args.client as string, 'client'), ctx.entities.matchContext());
}

async function waitForEvent(args: Doc, ctx: RunnerContext): Promise<void> {
  const deadline = Date.now() + WAIT_FOR_EVENT_MS;
  const wanted = Number(args.count);
  while (matchingEvents(ctx, args) < wanted) {
    if (Date.now() > deadline) throw new Error(`waited ${WAIT_FOR_EVENT_MS} ms for ${wanted} of ${show(args.event)}, saw ${matchingEvents(ctx, args)}`);
    await new Promise((resolve) => setTimeout(resolve, EVENT_POLL_MS));
  }
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

const specialOperations: Record<string, SpecialOperation> = {
  createEntities: async (args, ctx) => {
    for (const description of args.entities as EntityDescription[]) await ctx.createEntity(description);
  },
  assertCollectionExists: async (args, ctx) => check(await collectionExists(ctx, args), `collection ${String(args.databaseName)}.${String(args.collectionName)} does not exist`),
  assertCollectionNotExists: async (args, ctx) => check(!(await collectionExists(ctx, args)), `collection ${String(args.databaseName)}.${String(args.collectionName)} exists`),
  assertIndexExists: async (args, ctx) => check(await indexExists(ctx, args), `index ${String(args.indexName)} does not exist`),
  assertIndexNotExists: async (args, ctx) => check(!(await indexExists(ctx, args)), `index ${String(args.indexName)} exists`),
  assertSameLsidOnLastTwoCommands: async (args, ctx) => {
    const [a, b] = lastTwoLsids(ctx, args);
    check(a !== undefined && matchExactly(a, b) === null, `lsids differ: ${show(a)} and ${show(b)}`);
  },
  assertDifferentLsidOnLastTwoCommands: async (args, ctx) => {
    const [a, b] = lastTwoLsids(ctx, args);
    check(a !== undefined && b !== undefined && matchExactly(a, b) !== null, `lsids are the same: ${show(a)}`);
  },
  failPoint: async (args, ctx) => ctx.failPoints.configure(ctx.entities.get(args.client as string, 'client').client, args.failPoint as Doc),
  targetedFailPoint: async (args, ctx) => ctx.failPoints.configureOnPinned(sessionOf(ctx, args), args.failPoint as Doc),
  assertSessionTransactionState: async (args, ctx) => {
    const state = transactionState(sessionOf(ctx, args));
    check(state === args.state, `session ${String(args.session)} is in transaction state ${state}, not ${String(args.state)}`);
  },
  assertSessionPinned: async (args, ctx) => check(pinnedMongos(sessionOf(ctx, args)) !== undefined, `session ${String(args.session)} is not pinned to a mongos`),
  assertSessionUnpinned: async (args, ctx) => {
    const pinned = pinnedMongos(sessionOf(ctx, args));
    check(pinned === undefined, `session ${String(args.session)} is pinned to ${String(pinned)}`);
  },
  assertSessionDirty: async (args, ctx) => check(sessionIsDirty(ctx, args), `session ${String(args.session)} is not dirty`),
  assertSessionNotDirty: async (args, ctx) => check(!sessionIsDirty(ctx, args), `session ${String(args.session)} is dirty`),
  waitForEvent,
  assertEventCount: async (args, ctx) => {
    const count = matchingEvents(ctx, args);
    check(count === Number(args.count), `${count} events match ${show(args.event)}, not ${String(args.count)}`);
  },
  runOnThread: async (args, ctx) => {
    const operation = args.operation as Operation;
    ctx.entities.get(args.thread as string, 'thread').thread.run(() => ctx.runOperation(operation));
  },
  waitForThread: async (args, ctx) => ctx.entities.get(args.thread as string, 'thread').thread.wait(),
  wait: async (args) => {
    await new Promise((resolve) => setTimeout(resolve, Number(args.ms)));
  },
};

export function specialOperation(name: string): SpecialOperation | undefined {
  return specialOperations[name];
}

export const SPECIAL_OPERATION_NAMES: ReadonlySet<string> = new Set(Object.keys(specialOperations));
