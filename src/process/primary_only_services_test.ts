import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { PrimaryOnlyServiceRegistry, primaryOnlyTransition, type PrimaryOnlyService, type PrimaryTerm } from './primary_only_services.js';

const logger = pino({ level: 'silent' });

// A service that records what it was told; with slowStop, its stops end when the test lets them.
function recorder(name: string, events: string[]): PrimaryOnlyService & { terms: PrimaryTerm[]; finishStops: () => void; slowStop: boolean } {
  const pending: (() => void)[] = [];
  const service = {
    name,
    terms: [] as PrimaryTerm[],
    slowStop: false,
    finishStops: () => {
      for (const finish of pending.splice(0)) finish();
    },
    onStepUp(term: PrimaryTerm) {
      service.terms.push(term);
      events.push(`${name} up ${term.term}`);
    },
    onStepDown(atShutdown: boolean) {
      events.push(`${name} down${atShutdown ? ' (shutdown)' : ''}`);
      if (!service.slowStop) return undefined;
      return new Promise<void>((resolve) => {
        pending.push(() => {
          events.push(`${name} stopped`);
          resolve();
        });
      });
    },
  };
  return service;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('what a member state change means: start in the new term, stop, restart in another term, or nothing', () => {
  assert.equal(primaryOnlyTransition(undefined, true, 3), 'stepUp');
  assert.equal(primaryOnlyTransition(undefined, false, 3), 'none');
  assert.equal(primaryOnlyTransition(3, true, 3), 'none');
  assert.equal(primaryOnlyTransition(3, false, 3), 'stepDown');
  assert.equal(primaryOnlyTransition(3, false, 4), 'stepDown');
  assert.equal(primaryOnlyTransition(3, true, 5), 'restart');
});

test('services start when the member becomes a writable primary, at once, and stop when it steps down; SECONDARY states start nothing', () => {
  const events: string[] = [];
  const registry = new PrimaryOnlyServiceRegistry(logger);
  registry.register(recorder('a', events));
  registry.register(recorder('b', events));
  registry.memberStateChanged(false, 1);
  registry.memberStateChanged(false, 2);
  assert.deepEqual(events, []);
  registry.memberStateChanged(true, 2);
  assert.deepEqual(events, ['a up 2', 'b up 2']);
  assert.equal(registry.runningTerm, 2);
  registry.memberStateChanged(true, 2);
  registry.memberStateChanged(false, 3);
  assert.deepEqual(events, ['a up 2', 'b up 2', 'a down', 'b down']);
  assert.equal(registry.runningTerm, undefined);
});

test('a term is current until the step-down after it: a deposed primary\'s work sees it is not, even once primary again', () => {
  const events: string[] = [];
  const registry = new PrimaryOnlyServiceRegistry(logger);
  const a = recorder('a', events);
  registry.register(a);
  registry.memberStateChanged(true, 2);
  const first = a.terms[0]!;
  assert.equal(first.isCurrent(), true);
  registry.memberStateChanged(false, 2);
  assert.equal(first.isCurrent(), false);
  registry.memberStateChanged(true, 4);
  assert.equal(first.isCurrent(), false);
});

test('a step-up waits until every service of the previous term has stopped, and one that a new step-down overtook never starts', async () => {
  const events: string[] = [];
  const registry = new PrimaryOnlyServiceRegistry(logger);
  const slow = recorder('slow', events);
  slow.slowStop = true;
  registry.register(slow);
  registry.register(recorder('fast', events));
  registry.memberStateChanged(true, 1);
  registry.memberStateChanged(false, 1);
  registry.memberStateChanged(true, 2);
  await turn();
  assert.deepEqual(events, ['slow up 1', 'fast up 1', 'slow down', 'fast down']);
  slow.finishStops();
  await turn();
  assert.deepEqual(events.slice(4), ['slow stopped', 'slow up 2', 'fast up 2']);

  registry.memberStateChanged(false, 2);
  registry.memberStateChanged(true, 3);
  registry.memberStateChanged(false, 3);
  registry.memberStateChanged(true, 4);
  slow.finishStops();
  await turn();
  assert.deepEqual(events.slice(7), ['slow down', 'fast down', 'slow down', 'fast down', 'slow stopped', 'slow stopped', 'slow up 4', 'fast up 4']);
});

test('outside a replica set the services start at once in term 0 and stop at shutdown only; a service registered while they run starts too', async () => {
  const events: string[] = [];
  const registry = new PrimaryOnlyServiceRegistry(logger);
  registry.register(recorder('a', events));
  registry.startStandalone();
  registry.register(recorder('late', events));
  assert.deepEqual(events, ['a up 0', 'late up 0']);
  await registry.shutdown();
  assert.deepEqual(events.slice(2), ['a down (shutdown)', 'late down (shutdown)']);
  registry.memberStateChanged(true, 5);
  assert.equal(events.length, 4);
});
