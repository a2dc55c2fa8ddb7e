import { Long } from 'bson';
import type { Doc } from '../bson/values.js';
import { MEMBER_STATE_CODES, type MemberState } from '../repl/member_state.js';
import type { MemberPosition, ReplSetHeartbeatResponse, ReplSetRequestVotes, ReplSetRequestVotesResponse, ReplSetUpdatePosition } from '../repl/messages.js';
import type { ReplSetConfig } from '../repl/repl_set_config.js';
import { opTimeDate, opTimeDocument, parseOpTime } from './op_time_bson.js';

// The core's member messages as MongoDB's commands and replies (field names of
// repl_set_heartbeat_args_v1, repl_set_heartbeat_response, repl_set_request_votes_args and
// update_position_args), and back.

const STATE_BY_CODE = new Map<number, MemberState>(Object.entries(MEMBER_STATE_CODES).map(([name, code]) => [code, name as MemberState]));

export function memberStateOf(code: unknown): MemberState | null {
  return STATE_BY_CODE.get(Number(code)) ?? null;
}

const indexOfId = (config: ReplSetConfig, id: unknown): number => config.members.findIndex((m) => m._id === Number(id));
const indexOfHost = (config: ReplSetConfig, host: unknown): number => config.members.findIndex((m) => m.host === host);

export function heartbeatCommand(config: ReplSetConfig, selfIndex: number, term: number): Doc {
  const me = config.members[selfIndex]!;
  return { replSetHeartbeat: config._id, configVersion: config.version, configTerm: Long.fromNumber(0), hbv: 1, from: me.host, fromId: me._id, term: Long.fromNumber(term) };
}

// The sender of a replSetHeartbeat, by its member _id or its host.
export function heartbeatSender(config: ReplSetConfig, cmd: Doc): number {
  const byId = cmd.fromId === undefined ? -1 : indexOfId(config, cmd.fromId);
  return byId >= 0 ? byId : indexOfHost(config, cmd.from);
}

export function heartbeatReply(config: ReplSetConfig, r: ReplSetHeartbeatResponse, extra: Doc): Doc {
  const syncingTo = r.syncSourceIndex === null ? '' : config.members[r.syncSourceIndex]!.host;
  return {
    set: r.setName,
    state: MEMBER_STATE_CODES[r.state],
    term: Long.fromNumber(r.term),
    configVersion: r.configVersion,
    configTerm: Long.fromNumber(0),
    opTime: opTimeDocument(r.appliedOpTime),
    opTimeDate: opTimeDate(r.appliedOpTime),
    durableOpTime: opTimeDocument(r.durableOpTime),
    durableOpTimeDate: opTimeDate(r.durableOpTime),
    syncingTo,
    ...extra,
    $replData: { term: Long.fromNumber(r.term), lastOpCommitted: opTimeDocument(r.lastOpCommitted), configVersion: r.configVersion, syncSourceIndex: r.syncSourceIndex ?? -1 },
    ok: 1,
  };
}

export function parseHeartbeatReply(config: ReplSetConfig, reply: Doc, sentAtMs: number): ReplSetHeartbeatResponse | null {
  const state = memberStateOf(reply.state);
  if (reply.ok !== 1 || state === null) return null;
  const replData = (reply.$replData ?? {}) as Doc;
  const source = typeof reply.syncingTo === 'string' && reply.syncingTo !== '' ? indexOfHost(config, reply.syncingTo) : -1;
  return {
    kind: 'replSetHeartbeatResponse',
    setName: String(reply.set),
    term: Number(reply.term),
    state,
    appliedOpTime: parseOpTime(reply.opTime),
    durableOpTime: parseOpTime(reply.durableOpTime),
    configVersion: Number(reply.configVersion),
    syncSourceIndex: source < 0 ? null : source,
    lastOpCommitted: parseOpTime(replData.lastOpCommitted),
    sentAtMs,
  };
}

export function requestVotesCommand(m: ReplSetRequestVotes): Doc {
  return {
    replSetRequestVotes: 1,
    setName: m.setName,
    dryRun: m.dryRun,
    term: Long.fromNumber(m.term),
    candidateIndex: Long.fromNumber(m.candidateIndex),
    configVersion: Long.fromNumber(m.configVersion),
    configTerm: Long.fromNumber(0),
    lastAppliedOpTime: opTimeDocument(m.lastAppliedOpTime),
  };
}

export function parseRequestVotes(cmd: Doc): ReplSetRequestVotes {
  return {
    kind: 'replSetRequestVotes',
    setName: String(cmd.setName),
    dryRun: cmd.dryRun === true,
    term: Number(cmd.term),
    candidateIndex: Number(cmd.candidateIndex),
    configVersion: Number(cmd.configVersion),
    lastAppliedOpTime: parseOpTime(cmd.lastAppliedOpTime),
  };
}

export function requestVotesReply(r: ReplSetRequestVotesResponse): Doc {
  return { term: Long.fromNumber(r.term), voteGranted: r.voteGranted, reason: r.reason, ok: 1 };
}

export function parseRequestVotesReply(reply: Doc, request: ReplSetRequestVotes): ReplSetRequestVotesResponse | null {
  if (reply.ok !== 1) return null;
  return { kind: 'replSetRequestVotesResponse', term: Number(reply.term), voteGranted: reply.voteGranted === true, reason: String(reply.reason ?? ''), dryRun: request.dryRun, requestTerm: request.term };
}

// The sender's own position goes first: the receiver takes its member as the one it heard from.
export function updatePositionCommand(config: ReplSetConfig, selfIndex: number, m: ReplSetUpdatePosition): Doc {
  const ordered = [...m.optimes.filter((p) => p.memberIndex === selfIndex), ...m.optimes.filter((p) => p.memberIndex !== selfIndex)];
  return {
    replSetUpdatePosition: 1,
    optimes: ordered.map((p) => ({
      appliedOpTime: opTimeDocument(p.appliedOpTime),
      durableOpTime: opTimeDocument(p.durableOpTime),
      appliedWallTime: opTimeDate(p.appliedOpTime),
      durableWallTime: opTimeDate(p.durableOpTime),
      memberId: config.members[p.memberIndex]!._id,
      cfgver: m.configVersion,
    })),
    $replData: { term: Long.fromNumber(m.term), configVersion: m.configVersion },
  };
}

export function parseUpdatePosition(config: ReplSetConfig, cmd: Doc): ReplSetUpdatePosition {
  const replData = (cmd.$replData ?? {}) as Doc;
  const entries = Array.isArray(cmd.optimes) ? (cmd.optimes as Doc[]) : [];
  const optimes: MemberPosition[] = entries.flatMap((e) => {
    const memberIndex = indexOfId(config, e.memberId);
    return memberIndex < 0 ? [] : [{ memberIndex, appliedOpTime: parseOpTime(e.appliedOpTime), durableOpTime: parseOpTime(e.durableOpTime) }];
  });
  const cfgver = entries[0]?.cfgver ?? replData.configVersion;
  return { kind: 'replSetUpdatePosition', term: Number(replData.term ?? -1), configVersion: Number(cfgver ?? -1), optimes };
}
