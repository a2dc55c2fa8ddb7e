import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthenticationAttempts } from './authentication_attempts.js';

function attempts(): { clock: { now: number }; a: AuthenticationAttempts } {
  const clock = { now: 1_000_000 };
  const a = new AuthenticationAttempts(() => clock.now, { failuresMax: 3, windowMs: 10_000, lockoutMs: 5_000, keysMax: 4 }, { failuresMax: 2, windowMs: 10_000, lockoutMs: 5_000, keysMax: 4 });
  return { clock, a };
}

test('failures for one user lock that user out for the lockout, from any address, and not others', () => {
  const { clock, a } = attempts();
  a.failed('SCRAM-SHA-256', false, '10.0.0.1', 'admin.u');
  assert.ok(a.admits('10.0.0.2', 'admin.u'));
  a.failed('SCRAM-SHA-256', false, '10.0.0.2', 'admin.u');
  assert.ok(!a.admits('10.0.0.3', 'admin.u'));
  assert.ok(a.admits('10.0.0.3', 'admin.v'));
  clock.now += 4_999;
  assert.ok(!a.admits('10.0.0.3', 'admin.u'));
  clock.now += 1;
  assert.ok(a.admits('10.0.0.3', 'admin.u'));
  const status = a.serverStatus();
  assert.deepEqual(status.throttled, { attempts: 2, addressLockouts: 0, userLockouts: 1, addressesLocked: 0, usersLocked: 0 });
});

test('failures from one address lock it out for every user; failures outside the window start over', () => {
  const { clock, a } = attempts();
  a.failed('SCRAM-SHA-1', false, '10.0.0.1', 'admin.a');
  clock.now += 10_000;
  a.failed('SCRAM-SHA-1', false, '10.0.0.1', 'admin.b');
  a.failed('SCRAM-SHA-1', false, '10.0.0.1', undefined);
  assert.ok(a.admits('10.0.0.1', 'admin.c'));
  a.failed('SCRAM-SHA-1', false, '10.0.0.1', 'admin.d');
  assert.ok(!a.admits('10.0.0.1', 'admin.c'));
  assert.ok(!a.admits('10.0.0.1', undefined));
  assert.ok(a.admits('10.0.0.9', 'admin.c'));
  assert.equal((a.serverStatus().throttled as { addressesLocked: number }).addressesLocked, 1);
});

test('a success clears the counts of its address and user; a lockout stays until it ends', () => {
  const { a } = attempts();
  a.failed('SCRAM-SHA-256', false, '10.0.0.1', 'admin.u');
  a.succeeded('SCRAM-SHA-256', false, '10.0.0.1', 'admin.u');
  a.failed('SCRAM-SHA-256', false, '10.0.0.1', 'admin.u');
  assert.ok(a.admits('10.0.0.1', 'admin.u'));
  a.failed('SCRAM-SHA-256', false, '10.0.0.1', 'admin.u');
  a.succeeded('SCRAM-SHA-256', false, '10.0.0.5', 'admin.u');
  assert.ok(!a.admits('10.0.0.5', 'admin.u'));
});

test('counts per mechanism as MongoDB serverStatus does; memory is bounded by keysMax', () => {
  const { a } = attempts();
  a.received('SCRAM-SHA-256', true);
  a.succeeded('SCRAM-SHA-256', true, '10.0.0.1', 'admin.u');
  a.received('SCRAM-SHA-1', false);
  a.failed('SCRAM-SHA-1', false, '10.0.0.1', 'admin.u');
  a.received('PLAIN', false);
  const mechanisms = a.serverStatus().mechanisms as Record<string, unknown>;
  assert.deepEqual(mechanisms['SCRAM-SHA-256'], { authenticate: { received: 0, successful: 0, failed: 0 }, speculativeAuthenticate: { received: 1, successful: 1, failed: 0 } });
  assert.deepEqual(mechanisms['SCRAM-SHA-1'], { authenticate: { received: 1, successful: 0, failed: 1 }, speculativeAuthenticate: { received: 0, successful: 0, failed: 0 } });
  assert.deepEqual(Object.keys(mechanisms), ['SCRAM-SHA-1', 'SCRAM-SHA-256']);
  // Six addresses fail once each with room for four: the first two are forgotten, so failing
  // twice more from the first does not reach three.
  for (let i = 0; i < 6; i += 1) a.failed('SCRAM-SHA-1', false, `10.1.0.${i}`, undefined);
  a.failed('SCRAM-SHA-1', false, '10.1.0.0', undefined);
  a.failed('SCRAM-SHA-1', false, '10.1.0.0', undefined);
  assert.ok(a.admits('10.1.0.0', undefined));
});

test("the cluster's internal user is never braked and its failures lock no address", () => {
  const { a } = attempts();
  for (let i = 0; i < 10; i += 1) a.failed('SCRAM-SHA-256', false, '10.0.0.1', 'local.__system');
  assert.ok(a.admits('10.0.0.1', 'local.__system'));
  assert.ok(a.admits('10.0.0.1', 'admin.u'));
  a.failed('SCRAM-SHA-256', false, '10.0.0.1', 'admin.a');
  a.failed('SCRAM-SHA-256', false, '10.0.0.1', 'admin.b');
  a.failed('SCRAM-SHA-256', false, '10.0.0.1', 'admin.c');
  assert.ok(!a.admits('10.0.0.1', 'admin.u'));
  assert.ok(a.admits('10.0.0.1', 'local.__system'));
  assert.equal((a.serverStatus().mechanisms as Record<string, { authenticate: { failed: number } }>)['SCRAM-SHA-256']!.authenticate.failed, 13);
});
