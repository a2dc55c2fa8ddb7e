import { Long, ObjectId } from 'bson';
import type { Doc } from '../bson/values.js';

// What the monitor knows of one member from its last hello (the SDAM spec's ServerDescription).
export type ServerType = 'RSPrimary' | 'RSSecondary' | 'RSArbiter' | 'RSOther' | 'RSGhost' | 'Standalone' | 'Mongos' | 'Unknown';

// A server's topologyVersion: its process, and a counter that rises with every change of its role.
export interface TopologyVersion {
  processId: string;
  counter: number;
}

export interface ServerDescription {
  address: string;
  type: ServerType;
  // Moving average of the hello round trips; absent until one was measured.
  rttMs?: number;
  // When the monitor last heard from it (the clock's ms), and its newest write's wall time.
  lastUpdateMs: number;
  lastWriteDateMs?: number;
  setName?: string;
  setVersion?: number;
  electionId?: ObjectId;
  // The primary it knows of, and the member lists it reports.
  primary?: string;
  me?: string;
  hosts: string[];
  passives: string[];
  arbiters: string[];
  tags: Record<string, string>;
  hidden: boolean;
  topologyVersion?: TopologyVersion;
  // Why it is Unknown.
  error?: string;
}

export function unknownServer(address: string, nowMs: number, topologyVersion?: TopologyVersion, error?: string): ServerDescription {
  return {
    address, type: 'Unknown', lastUpdateMs: nowMs, hosts: [], passives: [], arbiters: [], tags: {}, hidden: false,
    ...(topologyVersion === undefined ? {} : { topologyVersion }),
    ...(error === undefined ? {} : { error }),
  };
}

// A member's hello reply as the SDAM spec classifies it.
export function describeHello(address: string, reply: Doc, nowMs: number): ServerDescription {
  const tv = readTopologyVersion(reply.topologyVersion);
  if (reply.ok !== 1 && reply.ok !== true) return unknownServer(address, nowMs, tv, typeof reply.errmsg === 'string' ? reply.errmsg : 'hello failed');
  const setName = typeof reply.setName === 'string' ? reply.setName : undefined;
  const writable = reply.isWritablePrimary === true || reply.ismaster === true;
  const hidden = reply.hidden === true;
  let type: ServerType;
  if (reply.msg === 'isdbgrid') type = 'Mongos';
  else if (setName !== undefined && writable) type = 'RSPrimary';
  else if (setName !== undefined && hidden) type = 'RSOther';
  else if (setName !== undefined && reply.secondary === true) type = 'RSSecondary';
  else if (setName !== undefined && reply.arbiterOnly === true) type = 'RSArbiter';
  else if (setName !== undefined) type = 'RSOther';
  else if (reply.isreplicaset === true) type = 'RSGhost';
  else type = 'Standalone';
  const lastWrite = reply.lastWrite as Doc | undefined;
  const lastWriteDate = lastWrite?.lastWriteDate;
  return {
    address,
    type,
    lastUpdateMs: nowMs,
    ...(lastWriteDate instanceof Date ? { lastWriteDateMs: lastWriteDate.getTime() } : {}),
    ...(setName === undefined ? {} : { setName }),
    ...(reply.setVersion === undefined ? {} : { setVersion: Number(reply.setVersion) }),
    ...(reply.electionId instanceof ObjectId ? { electionId: reply.electionId } : {}),
    ...(typeof reply.primary === 'string' ? { primary: reply.primary } : {}),
    ...(typeof reply.me === 'string' ? { me: reply.me } : {}),
    hosts: strings(reply.hosts),
    passives: strings(reply.passives),
    arbiters: strings(reply.arbiters),
    tags: stringValues(reply.tags),
    hidden,
    ...(tv === undefined ? {} : { topologyVersion: tv }),
  };
}

export function readTopologyVersion(value: unknown): TopologyVersion | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { processId, counter } = value as Doc;
  if (!(processId instanceof ObjectId)) return undefined;
  const n = counter instanceof Long ? counter.toNumber() : Number(counter);
  return Number.isFinite(n) ? { processId: processId.toHexString(), counter: n } : undefined;
}

// Whether `incoming` says less than `current` does: same process, lower counter. A new process
// (a restart) always says more.
export function olderTopologyVersion(incoming: TopologyVersion | undefined, current: TopologyVersion | undefined): boolean {
  return incoming !== undefined && current !== undefined && incoming.processId === current.processId && incoming.counter < current.counter;
}

// Whether an error stamped `incoming` is news: the spec ignores an error whose topologyVersion is
// not newer than what the server's description already shows.
export function staleError(incoming: TopologyVersion | undefined, current: TopologyVersion | undefined): boolean {
  return incoming !== undefined && current !== undefined && incoming.processId === current.processId && incoming.counter <= current.counter;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function stringValues(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Doc)) if (typeof v === 'string') out[k] = v;
  return out;
}
