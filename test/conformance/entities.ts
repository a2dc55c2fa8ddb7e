import {
  MongoClient, type AbstractCursor, type ClientSession, type Collection, type CommandFailedEvent,
  type CommandStartedEvent, type CommandSucceededEvent, type Db, type MongoClientOptions,
} from 'mongodb';
import { entityOptionsOf, toNative } from './arguments.js';
import { MONITORING_EVENT_TYPES, observeMonitoringEvents, type MonitoringEvent } from './monitoring_events.js';
import { TestThread } from './threads.js';
import type { MatchContext } from './unified_matcher.js';
import type { Doc, EntityDescription } from './test_file.js';
import { UNSUPPORTED_CLIENT_FIELDS, Unsupported } from './unsupported.js';

// The entity map of one test: clients (with the command, CMAP and SDAM events they observed),
// databases, collections, sessions, cursors, threads and saved results.

export type CommandEventType = 'commandStartedEvent' | 'commandSucceededEvent' | 'commandFailedEvent';

export interface ObservedEvent {
  type: CommandEventType;
  commandName: string;
  databaseName: string;
  command?: Doc;
  reply?: Doc;
  hasServiceId: boolean;
  hasServerConnectionId: boolean;
}

export interface ClientEntity {
  kind: 'client';
  client: MongoClient;
  events: ObservedEvent[];
  /** CMAP and SDAM events, in the order the driver emitted them. */
  monitoringEvents: MonitoringEvent[];
  /** The lsid of every commandStartedEvent but ignored ones, for the assert*LsidOnLastTwoCommands checks. */
  lsids: unknown[];
}

export type Entity =
  | ClientEntity
  | { kind: 'database'; db: Db }
  | { kind: 'collection'; collection: Collection }
  | { kind: 'session'; session: ClientSession; lsid: Doc }
  | { kind: 'cursor'; cursor: AbstractCursor }
  | { kind: 'thread'; thread: TestThread }
  | { kind: 'value'; value: unknown };

export type EntityKind = Entity['kind'];

const CLOSE_TIMEOUT_MS = 5000;

export class EntityMap {
  private readonly entities = new Map<string, Entity>();
  private recording = true;

  set(name: string, entity: Entity): void {
    if (this.entities.has(name)) throw new Error(`entity ${name} already exists`);
    this.entities.set(name, entity);
  }

  get<K extends EntityKind>(name: string, kind: K): Extract<Entity, { kind: K }> {
    const entity = this.entities.get(name);
    if (!entity) throw new Error(`no entity named ${name}`);
    if (entity.kind !== kind) throw new Error(`entity ${name} is a ${entity.kind}, not a ${kind}`);
    return entity as Extract<Entity, { kind: K }>;
  }

  find(name: string): Entity | undefined {
    return this.entities.get(name);
  }

  isRecording(): boolean {
    return this.recording;
  }

  /** Events after the operations (cursor cleanup, endSessions) are not the test's. */
  stopRecording(): void {
    this.recording = false;
  }

  matchContext(): MatchContext {
    return {
      entity: (name) => {
        const e = this.entities.get(name);
        if (!e) return new Error(`no entity named ${name}`);
        return e.kind === 'value' ? e.value : new Error(`entity ${name} is a ${e.kind}, not a BSON value`);
      },
      sessionLsid: (name) => {
        const e = this.entities.get(name);
        return e?.kind === 'session' ? e.lsid : new Error(`no session entity named ${name}`);
      },
    };
  }

  /** Sessions end and cursors close before their clients do, as the spec orders it. */
  async close(): Promise<void> {
    this.stopRecording();
    const all = [...this.entities.values()];
    // A thread still running an operation would use a client being closed.
    for (const e of all) {
      if (e.kind === 'thread') await withTimeout(e.thread.wait().catch(() => undefined));
    }
    for (const e of all) {
      if (e.kind === 'cursor') await withTimeout(e.cursor.close().catch(() => undefined));
      if (e.kind === 'session') await withTimeout(e.session.endSession().catch(() => undefined));
    }
    for (const e of all) {
      if (e.kind === 'client') await withTimeout(e.client.close().catch(() => undefined));
    }
    this.entities.clear();
  }
}

async function withTimeout(p: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise((resolve) => { timer = setTimeout(resolve, CLOSE_TIMEOUT_MS); })]);
  clearTimeout(timer);
}

export interface EntityEnvironment {
  uri: string;
  serverSelectionTimeoutMs: number;
}

/**
 * The URI with its first host only. The format gives every client one mongos unless it says
 * useMultipleMongoses: true, so that fail points set through one client or the runner's own
 * are on the mongos the others talk to.
 */
export function firstHostUri(uri: string): string {
  return uri.replace(/^(mongodb:\/\/(?:[^@/]*@)?)([^,/?]+)(?:,[^/?]*)?/, '$1$2');
}

/**
 * A client connects before the test goes on, as the format's runners do: its monitors start, so
 * the SDAM events a test waits for come whether or not it runs an operation first. A client that
 * cannot connect is left to fail the operations that use it.
 */
export async function createEntity(description: EntityDescription, map: EntityMap, env: EntityEnvironment): Promise<void> {
  const [kind, spec] = Object.entries(description)[0];
  switch (kind) {
    case 'client': {
      const entity = createClient(spec, map, env);
      map.set(spec.id, entity);
      await entity.client.connect().catch(() => undefined);
      return;
    }
    case 'database': {
      const client = map.get(spec.client as string, 'client').client;
      map.set(spec.id, { kind: 'database', db: client.db(spec.databaseName as string, entityOptionsOf(spec.databaseOptions as Doc | undefined)) });
      return;
    }
    case 'collection': {
      const db = map.get(spec.database as string, 'database').db;
      const options = entityOptionsOf(spec.collectionOptions as Doc | undefined);
      map.set(spec.id, { kind: 'collection', collection: db.collection(spec.collectionName as string, options) });
      return;
    }
    case 'session': {
      const client = map.get(spec.client as string, 'client').client;
      const session = client.startSession(toNative(spec.sessionOptions ?? {}) as Doc);
      map.set(spec.id, { kind: 'session', session, lsid: session.id as Doc });
      return;
    }
    case 'thread':
      map.set(spec.id, { kind: 'thread', thread: new TestThread() });
      return;
    default:
      throw new Unsupported(`entity type ${kind}`);
  }
}

const SENSITIVE_COMMANDS = new Set(['authenticate', 'saslStart', 'saslContinue', 'getnonce', 'createUser', 'updateUser', 'copydbgetnonce', 'copydbsaslstart', 'copydb']);
const HELLO_COMMANDS = new Set(['hello', 'isMaster', 'ismaster']);

// The driver puts a transaction's read concern object itself in its first command, then adds
// afterClusterTime to that object for the session's next transaction: the event keeps a copy.
function commandAsSent(command: Doc): Doc {
  const readConcern = command.readConcern as Doc | undefined;
  return readConcern ? { ...command, readConcern: { ...readConcern } } : command;
}

function createClient(spec: Doc, map: EntityMap, env: EntityEnvironment): ClientEntity {
  for (const field of UNSUPPORTED_CLIENT_FIELDS) {
    if (spec[field] !== undefined) throw new Unsupported(`client option ${field}`);
  }
  // The driver's connect() checks a connection out and in unless told not to, as it does itself
  // when an operation connects the client: tests count the pool's events from their first operation.
  // A server that an error a test provokes marked Unknown is checked again after 50 ms
  // (minHeartbeatFrequencyMS) rather than the driver's 500, which is most of what a test that
  // retries after such an error spends. The client polls (serverMonitoringMode): a monitor that
  // streams hello, as the driver's does against a replica set, ignores that request and waits for
  // the member's next streamed reply, which comes when its topology changes or after
  // heartbeatFrequencyMS (10 s, the runner's server selection timeout). A ShutdownError (11600,
  // 91) carries no topologyVersion, from MongoDB as from docshard, so the member is marked Unknown
  // with it; at the driver's 500 ms the stream had mostly not begun when a test's error came, at
  // 50 ms it mostly had, and a retry then waited 10 s or failed server selection. Routers and
  // standalone nodes, which have no topologyVersion, are polled anyway. Neither for a client whose
  // monitoring events a test counts: those tests count the checks the driver's own pace and
  // protocol make.
  const observe = new Set((spec.observeEvents as string[] | undefined) ?? []);
  const countsMonitoring = [...observe].some((t) => MONITORING_EVENT_TYPES.has(t));
  const options = {
    serverSelectionTimeoutMS: env.serverSelectionTimeoutMs,
    ...(countsMonitoring ? {} : { minHeartbeatFrequencyMS: 50, serverMonitoringMode: 'poll' }),
    ...(toNative(spec.uriOptions ?? {}) as Doc),
    monitorCommands: true,
    __skipPingOnConnect: true,
  } as MongoClientOptions;
  if (spec.serverApi) options.serverApi = toNative(spec.serverApi) as MongoClientOptions['serverApi'];
  const client = new MongoClient(spec.useMultipleMongoses === true ? env.uri : firstHostUri(env.uri), options);
  const entity: ClientEntity = { kind: 'client', client, events: [], monitoringEvents: [], lsids: [] };
  observeMonitoringEvents(client, new Set([...observe].filter((t) => MONITORING_EVENT_TYPES.has(t))), () => map.isRecording(), entity.monitoringEvents);
  const ignored = new Set(['configureFailPoint', ...((spec.ignoreCommandMonitoringEvents as string[] | undefined) ?? [])]);
  const observeSensitive = spec.observeSensitiveCommands === true;

  const wanted = (type: CommandEventType, name: string, redacted: boolean): boolean => {
    if (!map.isRecording() || !observe.has(type) || ignored.has(name)) return false;
    if (observeSensitive) return true;
    // The driver redacts a hello only when it carries speculative authentication.
    return !SENSITIVE_COMMANDS.has(name) && !(HELLO_COMMANDS.has(name) && redacted);
  };
  const common = (e: CommandStartedEvent | CommandSucceededEvent | CommandFailedEvent) => ({
    commandName: e.commandName,
    databaseName: e.databaseName,
    hasServiceId: e.serviceId !== undefined,
    hasServerConnectionId: e.serverConnectionId !== null && e.serverConnectionId !== undefined,
  });
  client.on('commandStarted', (e) => {
    if (map.isRecording() && !ignored.has(e.commandName)) entity.lsids.push(e.command.lsid);
    if (wanted('commandStartedEvent', e.commandName, Object.keys(e.command).length === 0)) {
      entity.events.push({ type: 'commandStartedEvent', command: commandAsSent(e.command), ...common(e) });
    }
  });
  client.on('commandSucceeded', (e) => {
    const reply = (e.reply ?? {}) as Doc;
    if (wanted('commandSucceededEvent', e.commandName, Object.keys(reply).length === 0)) {
      entity.events.push({ type: 'commandSucceededEvent', reply, ...common(e) });
    }
  });
  client.on('commandFailed', (e) => {
    if (wanted('commandFailedEvent', e.commandName, false)) entity.events.push({ type: 'commandFailedEvent', ...common(e) });
  });
  return entity;
}
