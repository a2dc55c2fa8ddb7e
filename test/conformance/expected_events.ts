import type { ClientEntity, ObservedEvent } from './entities.js';
import type { MonitoringEvent } from './monitoring_events.js';
import { describe, matchValue, type MatchContext } from './unified_matcher.js';
import type { Doc, ExpectedEventsForClient } from './test_file.js';

// expectEvents for command monitoring, CMAP and SDAM: same events, same order; extra ones at the
// end only when ignoreExtraEvents says so. waitForEvent and assertEventCount count the matches.

export function checkEvents(expected: ExpectedEventsForClient, client: ClientEntity, ctx: MatchContext): string | null {
  const eventType = expected.eventType ?? 'command';
  if (eventType !== 'command') return checkMonitoringEvents(expected, client.monitoringEvents.filter((e) => e.eventType === eventType), ctx);
  const observed = client.events;
  const tooMany = observed.length > expected.events.length && !expected.ignoreExtraEvents;
  if (observed.length < expected.events.length || tooMany) {
    return `expected ${expected.events.length} events, observed ${observed.length}: ${summary(observed)}`;
  }
  for (let i = 0; i < expected.events.length; i++) {
    const problem = checkEvent(expected.events[i], observed[i], ctx);
    if (problem) return `event ${i} (${observed[i].type} ${observed[i].commandName}): ${problem}`;
  }
  return null;
}

function checkMonitoringEvents(expected: ExpectedEventsForClient, observed: MonitoringEvent[], ctx: MatchContext): string | null {
  const tooMany = observed.length > expected.events.length && !expected.ignoreExtraEvents;
  if (observed.length < expected.events.length || tooMany) {
    return `expected ${expected.events.length} ${String(expected.eventType)} events, observed ${observed.length}: [${observed.map((e) => e.type).join(', ')}]`;
  }
  for (let i = 0; i < expected.events.length; i++) {
    const problem = checkMonitoringEvent(expected.events[i], observed[i], ctx);
    if (problem) return `event ${i} (${observed[i].type}): ${problem}`;
  }
  return null;
}

function checkMonitoringEvent(expected: Doc, actual: MonitoringEvent, ctx: MatchContext): string | null {
  const [type, spec] = Object.entries(expected)[0] as [string, Doc];
  if (type !== actual.type) return `expected ${type}`;
  const m = matchValue(spec, actual.fields, true, ctx);
  return m ? describe(m) : null;
}

/** How many of the client's events (of any kind) match `expected`, as waitForEvent and assertEventCount count them. */
export function countMatchingEvents(expected: Doc, client: ClientEntity, ctx: MatchContext): number {
  const commands = client.events.filter((e) => checkEvent(expected, e, ctx) === null).length;
  return commands + client.monitoringEvents.filter((e) => checkMonitoringEvent(expected, e, ctx) === null).length;
}

function checkEvent(expected: Doc, actual: ObservedEvent, ctx: MatchContext): string | null {
  const [type, spec] = Object.entries(expected)[0] as [string, Doc];
  if (type !== actual.type) return `expected ${type}`;
  if (spec.commandName !== undefined && spec.commandName !== actual.commandName) return `expected commandName ${String(spec.commandName)}`;
  if (spec.databaseName !== undefined && spec.databaseName !== actual.databaseName) {
    return `expected databaseName ${String(spec.databaseName)}, got ${actual.databaseName}`;
  }
  if (spec.hasServiceId !== undefined && Boolean(spec.hasServiceId) !== actual.hasServiceId) return `expected hasServiceId ${String(spec.hasServiceId)}`;
  if (spec.hasServerConnectionId !== undefined && Boolean(spec.hasServerConnectionId) !== actual.hasServerConnectionId) {
    return `expected hasServerConnectionId ${String(spec.hasServerConnectionId)}`;
  }
  if (spec.command !== undefined) {
    const m = matchValue(spec.command, commandAsSpecified(spec.command as Doc, actual), true, ctx);
    if (m) return `command ${describe(m)}`;
  }
  if (spec.reply !== undefined) {
    const m = matchValue(spec.reply, actual.reply, true, ctx);
    if (m) return `reply ${describe(m)}`;
  }
  return null;
}

// The driver (7.9) gives commitTransaction and abortTransaction wtimeout: 10000 whenever the
// transaction has a write concern, where the transactions specification adds it to a retried
// commit only. A driver's choice, not the server's: an expected write concern without wtimeout
// is compared with the one sent minus the driver's, and one with wtimeout as sent.
const DRIVER_WTIMEOUT_MS = 10_000;
const TRANSACTION_END_COMMANDS = new Set(['commitTransaction', 'abortTransaction']);

function commandAsSpecified(expected: Doc, actual: ObservedEvent): Doc | undefined {
  const sent = actual.command?.writeConcern as Doc | undefined;
  const wanted = expected.writeConcern as Doc | undefined;
  if (!TRANSACTION_END_COMMANDS.has(actual.commandName) || !sent || Number(sent.wtimeout) !== DRIVER_WTIMEOUT_MS) return actual.command;
  if (!wanted || typeof wanted !== 'object' || 'wtimeout' in wanted || Object.keys(wanted).some((k) => k.startsWith('$$'))) return actual.command;
  const { wtimeout: _driverWtimeout, ...writeConcern } = sent;
  return { ...actual.command, writeConcern };
}

function summary(events: ObservedEvent[]): string {
  return `[${events.map((e) => `${e.type.replace('Event', '')}:${e.commandName}`).join(', ')}]`;
}
