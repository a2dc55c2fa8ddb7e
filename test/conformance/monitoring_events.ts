import type { MongoClient } from 'mongodb';
import type { Doc } from './test_file.js';

// CMAP (connection pool) and SDAM (server discovery and monitoring) events a client observes,
// kept as the fields the format's expected events can name.

export interface MonitoringEvent {
  type: string;
  eventType: 'cmap' | 'sdam';
  /** What an expected event's fields are matched against. */
  fields: Doc;
}

type Describe = (e: Record<string, unknown>) => Doc;

const description = (d: unknown): Doc => ({ type: (d as { type?: unknown } | undefined)?.type });
const descriptions: Describe = (e) => ({ previousDescription: description(e.previousDescription), newDescription: description(e.newDescription) });
const reason: Describe = (e) => ({ reason: e.reason });
const awaited: Describe = (e) => ({ awaited: e.awaited });
const none: Describe = () => ({});

// The format's event name, the driver's, and the fields the format knows.
const CMAP_EVENTS: [string, string, Describe][] = [
  ['poolCreatedEvent', 'connectionPoolCreated', none],
  ['poolReadyEvent', 'connectionPoolReady', none],
  ['poolClearedEvent', 'connectionPoolCleared', (e) => ({ hasServiceId: e.serviceId !== undefined, interruptInUseConnections: e.interruptInUseConnections === true })],
  ['poolClosedEvent', 'connectionPoolClosed', none],
  ['connectionCreatedEvent', 'connectionCreated', none],
  ['connectionReadyEvent', 'connectionReady', none],
  ['connectionClosedEvent', 'connectionClosed', reason],
  ['connectionCheckOutStartedEvent', 'connectionCheckOutStarted', none],
  ['connectionCheckOutFailedEvent', 'connectionCheckOutFailed', reason],
  ['connectionCheckedOutEvent', 'connectionCheckedOut', none],
  ['connectionCheckedInEvent', 'connectionCheckedIn', none],
];

const SDAM_EVENTS: [string, string, Describe][] = [
  ['serverDescriptionChangedEvent', 'serverDescriptionChanged', descriptions],
  ['topologyDescriptionChangedEvent', 'topologyDescriptionChanged', descriptions],
  ['serverHeartbeatStartedEvent', 'serverHeartbeatStarted', awaited],
  ['serverHeartbeatSucceededEvent', 'serverHeartbeatSucceeded', awaited],
  ['serverHeartbeatFailedEvent', 'serverHeartbeatFailed', awaited],
  ['topologyOpeningEvent', 'topologyOpening', none],
  ['topologyClosedEvent', 'topologyClosed', none],
];

export const MONITORING_EVENT_TYPES: ReadonlySet<string> = new Set([...CMAP_EVENTS, ...SDAM_EVENTS].map(([name]) => name));

/** Records each event of `observe` the client emits while `recording()` says so. */
export function observeMonitoringEvents(client: MongoClient, observe: ReadonlySet<string>, recording: () => boolean, events: MonitoringEvent[]): void {
  const listen = (table: [string, string, Describe][], eventType: MonitoringEvent['eventType']) => {
    for (const [type, driverName, fields] of table) {
      if (!observe.has(type)) continue;
      client.on(driverName as 'connectionCreated', (e: unknown) => {
        if (recording()) events.push({ type, eventType, fields: fields(e as Record<string, unknown>) });
      });
    }
  };
  listen(CMAP_EVENTS, 'cmap');
  listen(SDAM_EVENTS, 'sdam');
}
