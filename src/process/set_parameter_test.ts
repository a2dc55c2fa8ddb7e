import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_PARAMETERS, parseRouterSetParameters, parseSetParameters } from './set_parameter.js';

describe('--setParameter', () => {
  it('keeps the defaults when none is given and reads orphanCleanupDelaySecs', () => {
    assert.deepEqual(parseSetParameters([]), DEFAULT_PARAMETERS);
    assert.equal(parseSetParameters(['orphanCleanupDelaySecs=2']).orphanCleanupDelaySecs, 2);
    assert.equal(parseSetParameters(['balancerIdleRoundIntervalMillis=200']).balancerIdleRoundIntervalMillis, 200);
  });

  it('refuses unknown names and bad values', () => {
    assert.throws(() => parseSetParameters(['noSuchParameter=1']), /Unknown --setParameter/);
    assert.throws(() => parseSetParameters(['orphanCleanupDelaySecs=-1']), /Bad value/);
    assert.throws(() => parseSetParameters(['orphanCleanupDelaySecs']), /Bad value/);
  });

  it('reads ttlMonitorSleepSecs and refuses 0, as mongod does', () => {
    assert.equal(parseSetParameters([]).ttlMonitorSleepSecs, 60);
    assert.equal(parseSetParameters(['ttlMonitorSleepSecs=1']).ttlMonitorSleepSecs, 1);
    assert.throws(() => parseSetParameters(['ttlMonitorSleepSecs=0']), /Bad value/);
  });

  it('reads logicalSessionRefreshMillis on nodes and routers, 5 minutes by default, and refuses 0', () => {
    assert.equal(parseSetParameters([]).logicalSessionRefreshMillis, 300_000);
    assert.equal(parseSetParameters(['logicalSessionRefreshMillis=200']).logicalSessionRefreshMillis, 200);
    assert.equal(parseRouterSetParameters(['logicalSessionRefreshMillis=200']).logicalSessionRefreshMillis, 200);
    assert.throws(() => parseSetParameters(['logicalSessionRefreshMillis=0']), /Bad value/);
    assert.throws(() => parseRouterSetParameters(['logicalSessionRefreshMillis=soon']), /Bad value/);
  });

  it('reads maxAcceptableLogicalClockDriftSecs on nodes and routers, a year by default, and refuses 0', () => {
    assert.equal(parseSetParameters([]).maxAcceptableLogicalClockDriftSecs, 365 * 24 * 3600);
    assert.equal(parseSetParameters(['maxAcceptableLogicalClockDriftSecs=100']).maxAcceptableLogicalClockDriftSecs, 100);
    assert.equal(parseRouterSetParameters(['maxAcceptableLogicalClockDriftSecs=100']).maxAcceptableLogicalClockDriftSecs, 100);
    assert.throws(() => parseSetParameters(['maxAcceptableLogicalClockDriftSecs=0']), /Bad value/);
    assert.throws(() => parseRouterSetParameters(['maxAcceptableLogicalClockDriftSecs=value']), /Bad value/);
    assert.throws(() => parseRouterSetParameters(['maxAcceptableLogicalClockDriftSecs=-1']), /Bad value/);
  });

  it("reads a router's routerFastPaths, on by default, and refuses what is not a boolean", () => {
    assert.deepEqual(parseRouterSetParameters([]), { routerFastPaths: true, userCacheInvalidationIntervalSecs: 30, logicalSessionRefreshMillis: 300_000, maxAcceptableLogicalClockDriftSecs: 31_536_000 });
    assert.equal(parseRouterSetParameters(['routerFastPaths=false']).routerFastPaths, false);
    assert.equal(parseRouterSetParameters(['routerFastPaths=0']).routerFastPaths, false);
    assert.equal(parseRouterSetParameters(['routerFastPaths=false', 'routerFastPaths=true']).routerFastPaths, true);
    assert.throws(() => parseRouterSetParameters(['routerFastPaths=off']), /Bad value/);
    assert.throws(() => parseRouterSetParameters(['routerFastPaths']), /Bad value/);
    assert.throws(() => parseRouterSetParameters(['orphanCleanupDelaySecs=1']), /Unknown --setParameter/);
  });

  it("reads a router's userCacheInvalidationIntervalSecs, 30 by default, at least 1", () => {
    assert.equal(parseRouterSetParameters(['userCacheInvalidationIntervalSecs=1']).userCacheInvalidationIntervalSecs, 1);
    assert.throws(() => parseRouterSetParameters(['userCacheInvalidationIntervalSecs=0']), /Bad value/);
    assert.throws(() => parseSetParameters(['userCacheInvalidationIntervalSecs=5']), /Unknown --setParameter/);
  });
});
