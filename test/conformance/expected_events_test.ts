import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MongoClient } from 'mongodb';
import type { ClientEntity } from './entities.js';
import { checkEvents, countMatchingEvents } from './expected_events.js';
import type { MonitoringEvent } from './monitoring_events.js';
import type { MatchContext } from './unified_matcher.js';

const ctx: MatchContext = { entity: (name) => new Error(`no entity ${name}`), sessionLsid: (name) => new Error(`no session ${name}`) };

function clientWith(monitoringEvents: MonitoringEvent[]): ClientEntity {
  return { kind: 'client', client: {} as MongoClient, events: [], monitoringEvents, lsids: [] };
}

const toUnknown: MonitoringEvent = { type: 'serverDescriptionChangedEvent', eventType: 'sdam', fields: { previousDescription: { type: 'RSPrimary' }, newDescription: { type: 'Unknown' } } };
const cleared: MonitoringEvent = { type: 'poolClearedEvent', eventType: 'cmap', fields: { hasServiceId: false, interruptInUseConnections: true } };
const checkedIn: MonitoringEvent = { type: 'connectionCheckedInEvent', eventType: 'cmap', fields: {} };

describe('CMAP and SDAM events', () => {
  it('expectEvents compares the events of its eventType only, in order, with their fields', () => {
    const client = clientWith([toUnknown, cleared, checkedIn]);
    assert.equal(checkEvents({ client: 'c', eventType: 'cmap', events: [{ poolClearedEvent: { interruptInUseConnections: true } }, { connectionCheckedInEvent: {} }] }, client, ctx), null);
    assert.equal(checkEvents({ client: 'c', eventType: 'sdam', events: [{ serverDescriptionChangedEvent: { newDescription: { type: 'Unknown' } } }] }, client, ctx), null);
    assert.match(checkEvents({ client: 'c', eventType: 'cmap', events: [{ poolClearedEvent: { interruptInUseConnections: false } }, { connectionCheckedInEvent: {} }] }, client, ctx) ?? '', /event 0/);
    assert.match(checkEvents({ client: 'c', eventType: 'cmap', events: [{ poolClearedEvent: {} }] }, client, ctx) ?? '', /expected 1 cmap events, observed 2/);
    assert.equal(checkEvents({ client: 'c', eventType: 'cmap', events: [{ poolClearedEvent: {} }], ignoreExtraEvents: true }, client, ctx), null);
  });

  it('waitForEvent and assertEventCount count the matching events of any kind', () => {
    const client = clientWith([toUnknown, cleared, { ...toUnknown, fields: { previousDescription: { type: 'Unknown' }, newDescription: { type: 'RSPrimary' } } }]);
    assert.equal(countMatchingEvents({ serverDescriptionChangedEvent: {} }, client, ctx), 2);
    assert.equal(countMatchingEvents({ serverDescriptionChangedEvent: { newDescription: { type: 'Unknown' } } }, client, ctx), 1);
    assert.equal(countMatchingEvents({ poolClearedEvent: {} }, client, ctx), 1);
    assert.equal(countMatchingEvents({ topologyDescriptionChangedEvent: {} }, client, ctx), 0);
  });
});
