import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import {
  checkPrivilegesForRole, checkRolesForRole, inherited, mergePrivileges, parsePrivileges, reachableRoles, removePrivileges, roleDocument, roleId,
  wouldCycle, type Privilege,
} from './roles.js';
import type { RoleName } from './users.js';

const r = (role: string, db = 'app'): RoleName => ({ role, db });

function finder(docs: Doc[]): (name: RoleName) => Doc | undefined {
  return (name) => docs.find((d) => d._id === roleId(name));
}

test('privileges of one resource merge into one, in the order given, each action once', () => {
  const parsed = parsePrivileges([
    { resource: { db: 'app', collection: 'c' }, actions: ['find', 'find'] },
    { resource: { cluster: true }, actions: ['serverStatus'] },
    { resource: { db: 'app', collection: 'c' }, actions: ['insert', 'find'] },
  ]);
  assert.deepEqual(parsed, [
    { resource: { db: 'app', collection: 'c' }, actions: ['find', 'insert'] },
    { resource: { cluster: true }, actions: ['serverStatus'] },
  ]);
});

test('a malformed privilege or an unknown action is refused with BadValue', () => {
  for (const bad of [
    [{ resource: { db: 'app' }, actions: ['find'] }],
    [{ resource: { cluster: false }, actions: ['find'] }],
    [{ resource: { db: 'app', collection: 'c', cluster: true }, actions: ['find'] }],
    [{ resource: { db: 'app', collection: 'c' }, actions: 'find' }],
    [{ resource: { db: 'app', collection: 'c' }, actions: ['find', 'teleport'] }],
    'not an array',
  ]) {
    assert.throws(() => parsePrivileges(bad), (e: unknown) => e instanceof MongoError && e.code === 2, JSON.stringify(bad));
  }
});

test('revoking takes actions away and drops a privilege left with none', () => {
  const held: Privilege[] = [{ resource: { db: 'app', collection: 'c' }, actions: ['find', 'insert'] }, { resource: { cluster: true }, actions: ['serverStatus'] }];
  assert.deepEqual(removePrivileges(held, [{ resource: { cluster: true }, actions: ['serverStatus'] }, { resource: { db: 'app', collection: 'c' }, actions: ['insert'] }]), [
    { resource: { db: 'app', collection: 'c' }, actions: ['find'] },
  ]);
  assert.deepEqual(mergePrivileges(held, [{ resource: { db: 'app', collection: 'c' }, actions: ['remove'] }])[0]!.actions, ['find', 'insert', 'remove']);
});

test("a role outside admin holds only its own database's privileges and roles, and never itself", () => {
  assert.throws(() => checkPrivilegesForRole(r('x'), [{ resource: { db: '', collection: '' }, actions: ['find'] }]), (e: unknown) => e instanceof MongoError && e.code === 49);
  assert.throws(() => checkPrivilegesForRole(r('x'), [{ resource: { cluster: true }, actions: ['serverStatus'] }]), (e: unknown) => e instanceof MongoError && e.code === 49);
  checkPrivilegesForRole(r('x'), [{ resource: { db: 'app', collection: 'c' }, actions: ['find'] }]);
  checkPrivilegesForRole(r('x', 'admin'), [{ resource: { cluster: true }, actions: ['serverStatus'] }]);
  assert.throws(() => checkRolesForRole(r('x'), [r('read', 'other')]), /cannot be granted roles from other databases/);
  assert.throws(() => checkRolesForRole(r('x'), [r('x')]), /Cannot grant role x@app to itself/);
  checkRolesForRole(r('x', 'admin'), [r('read', 'other')]);
});

test('inheritance reaches every role once, stops at built-in roles, and survives a cycle in the stored roles', () => {
  const docs = [
    roleDocument(r('a'), [{ resource: { db: 'app', collection: 'c' }, actions: ['find'] }], [r('b'), r('read')]),
    roleDocument(r('b'), [{ resource: { db: 'app', collection: 'c' }, actions: ['insert'] }], [r('a'), r('gone')]),
  ];
  const find = finder(docs);
  assert.deepEqual(reachableRoles([r('a')], find), [r('a'), r('b'), r('read'), r('gone')]);
  assert.ok(wouldCycle(r('a'), [r('b')], find));
  assert.ok(!wouldCycle(r('c'), [r('a')], find));
  const { inheritedRoles, inheritedPrivileges } = inherited([r('b')], [], find);
  assert.deepEqual(inheritedRoles, [r('b'), r('a'), r('gone'), r('read')]);
  const onC = inheritedPrivileges.find((p) => 'db' in p.resource && p.resource.collection === 'c');
  assert.deepEqual(onC?.actions, ['insert', 'find']);
  const onApp = inheritedPrivileges.find((p) => 'db' in p.resource && p.resource.db === 'app' && p.resource.collection === '');
  assert.ok(onApp?.actions.includes('listCollections'));
});
