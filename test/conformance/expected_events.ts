import type { ObservedEvent } from './entities.js';
import { describe, matchValue, type MatchContext } from './matcher.js';
import type { Doc, ExpectedEventsForClient } from './test_file.js';

// expectEvents for command monitoring: same events, same order; extra ones at the end only
// when ignoreExtraEvents says so.

export function checkEvents(expected: ExpectedEventsForClient, observed: ObservedEvent[], ctx: MatchContext): string | null {
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
    const m = matchValue(spec.command, actual.command, true, ctx);
    if (m) return `command ${describe(m)}`;
  }
  if (spec.reply !== undefined) {
    const m = matchValue(spec.reply, actual.reply, true, ctx);
    if (m) return `reply ${describe(m)}`;
  }
  return null;
}

function summary(events: ObservedEvent[]): string {
  return `[${events.map((e) => `${e.type.replace('Event', '')}:${e.commandName}`).join(', ')}]`;
}
