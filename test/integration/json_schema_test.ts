import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Double, Int32, ObjectId, type Db, type MongoClient } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { withCluster, withNode } from '../helpers/fixtures.js';

// $jsonSchema through the official driver, with the examples of MongoDB's manual ("Specify JSON
// Schema Validation", "Query for and Modify Valid or Invalid Documents") and their documented
// results, on one node and through a router over collections sharded on a field no schema names.

interface Refusal {
  code: number;
  message?: string;
  errInfo?: AnyDoc;
}

async function refusal(p: Promise<unknown>): Promise<Refusal> {
  try {
    await p;
  } catch (err) {
    const e = err as AnyDoc;
    return { code: e.code as number, message: e.message as string, errInfo: e.errInfo ?? e.writeErrors?.[0]?.errInfo ?? e.errorResponse?.errInfo };
  }
  return { code: 0 };
}

const studentsValidator = {
  $jsonSchema: {
    bsonType: 'object',
    title: 'Student Object Validation',
    required: ['address', 'major', 'name', 'year'],
    properties: {
      name: { bsonType: 'string', description: "'name' must be a string and is required" },
      year: { bsonType: 'int', minimum: 2017, maximum: 3017, description: "'year' must be an integer in [ 2017, 3017 ] and is required" },
      gpa: { bsonType: ['double'], description: "'gpa' must be a double if the field exists" },
    },
  },
};

const studentsFailure = {
  operatorName: '$jsonSchema',
  title: 'Student Object Validation',
  schemaRulesNotSatisfied: [{
    operatorName: 'properties',
    propertiesNotSatisfied: [{
      propertyName: 'gpa',
      description: "'gpa' must be a double if the field exists",
      details: [{ operatorName: 'bsonType', specifiedAs: { bsonType: ['double'] }, reason: 'type did not match', consideredValue: 3, consideredType: 'int' }],
    }],
  }],
};

const inventorySchema = {
  $jsonSchema: {
    required: ['item', 'qty', 'instock'],
    properties: {
      item: { bsonType: 'string' },
      qty: { bsonType: 'int' },
      size: {
        bsonType: 'object',
        required: ['uom'],
        properties: { uom: { bsonType: 'string' }, h: { bsonType: 'double' }, w: { bsonType: 'double' } },
      },
      instock: { bsonType: 'bool' },
    },
  },
};

// The manual's inventory, its numbers typed as mongosh types them (qty NumberInt, sizes doubles).
function inventory(): AnyDoc[] {
  const size = (h: number, w: number, uom: string): AnyDoc => ({ h: new Double(h), w: new Double(w), uom });
  return [
    { item: 'journal', qty: new Int32(25), size: size(14, 21, 'cm'), instock: true },
    { item: 'notebook', qty: new Int32(50), size: size(8.5, 11, 'in'), instock: true },
    { item: 'paper', qty: new Int32(100), size: size(8.5, 11, 'in'), instock: 1 },
    { item: 'planner', qty: new Int32(75), size: size(22.85, 30, 'cm'), instock: 1 },
    { item: 'postcard', qty: new Int32(45), size: size(10, 15.25, 'cm'), instock: true },
    { item: 'apple', qty: new Int32(45), status: 'A', instock: true },
    { item: 'pears', qty: new Int32(50), status: 'A', instock: true },
  ].map((doc, i) => ({ sk: i * 100, ...doc }));
}

const items = (docs: AnyDoc[]): string[] => docs.map((d) => d.item as string).sort();

// Where the collections live: on a node, created by the first write; through a router, sharded
// on `sk` with a chunk on each shard.
type Place = (db: Db, name: string, options?: AnyDoc) => Promise<void>;

async function studentsExample(db: Db, place: Place): Promise<void> {
  await place(db, 'students', { validator: studentsValidator });
  const students = db.collection<AnyDoc>('students');
  for (const sk of [5, 500]) {
    const _id = new ObjectId();
    const refused = await refusal(students.insertOne({ _id, sk, name: 'Alice', year: new Int32(2019), major: 'History', gpa: new Int32(3), address: { city: 'NYC', street: '33rd Street' } }));
    assert.equal(refused.code, 121, `the insert at sk ${sk} is refused`);
    assert.equal(refused.message, 'Document failed validation');
    assert.deepEqual(refused.errInfo, { failingDocumentId: _id, details: studentsFailure }, `errInfo at sk ${sk}`);
    await students.insertOne({ _id, sk, name: 'Alice', year: new Int32(2019), major: 'History', gpa: new Double(3.0), address: { city: 'NYC', street: '33rd Street' } });
  }
  assert.equal(await students.countDocuments(), 2, 'a double gpa passes');
  const missing = await refusal(students.insertOne({ sk: 7, name: 'Bob', year: new Int32(2016), major: 'Math' }));
  assert.equal(missing.code, 121);
  assert.deepEqual(missing.errInfo?.details.schemaRulesNotSatisfied, [
    {
      operatorName: 'properties',
      propertiesNotSatisfied: [{
        propertyName: 'year',
        description: "'year' must be an integer in [ 2017, 3017 ] and is required",
        details: [{ operatorName: 'minimum', specifiedAs: { minimum: 2017 }, reason: 'comparison failed', consideredValue: 2016 }],
      }],
    },
    { operatorName: 'required', specifiedAs: { required: ['address', 'major', 'name', 'year'] }, missingProperties: ['address'] },
  ]);
  const updated = await refusal(students.updateOne({ sk: 500 }, { $set: { year: 'late' } }));
  assert.equal(updated.code, 121, 'an update is validated too');
  assert.equal(updated.errInfo?.details.operatorName, '$jsonSchema');
  const modified = await refusal(students.findOneAndUpdate({ sk: 5 }, { $unset: { name: '' } }));
  assert.equal(modified.code, 121, 'findAndModify is validated too');
  assert.deepEqual(modified.errInfo?.details.schemaRulesNotSatisfied, [
    { operatorName: 'required', specifiedAs: { required: ['address', 'major', 'name', 'year'] }, missingProperties: ['name'] },
  ]);
}

async function inventoryExample(db: Db, place: Place): Promise<void> {
  await place(db, 'inventory');
  const inv = db.collection<AnyDoc>('inventory');
  await inv.insertMany(inventory());
  const valid = ['apple', 'journal', 'notebook', 'pears', 'postcard'];
  assert.deepEqual(items(await inv.find(inventorySchema).toArray()), valid);
  assert.deepEqual(items(await inv.aggregate([{ $match: inventorySchema }]).toArray()), valid);
  assert.equal(await inv.countDocuments(inventorySchema), 5);
  assert.equal((await db.command({ count: 'inventory', query: inventorySchema })).n, 5, 'the count command');
  assert.deepEqual((await inv.distinct('item', { $nor: [inventorySchema] })).sort(), ['paper', 'planner']);
  assert.deepEqual(items(await inv.find({ $nor: [inventorySchema] }).toArray()), ['paper', 'planner']);
  const updated = await inv.updateMany({ $nor: [inventorySchema] }, { $set: { isValid: false } });
  assert.equal(updated.matchedCount, 2);
  assert.deepEqual(items(await inv.find({ isValid: false }).toArray()), ['paper', 'planner']);
  const deleted = await inv.deleteMany({ $nor: [inventorySchema] });
  assert.equal(deleted.deletedCount, 2);
  assert.deepEqual(items(await inv.find().toArray()), valid);
}

async function levelsAndActions(db: Db, place: Place): Promise<void> {
  await place(db, 'levels', { validator: { $jsonSchema: { required: ['x'] } } });
  const c = db.collection<AnyDoc>('levels');
  await c.insertMany([{ sk: 1, x: 1 }, { sk: 600, y: 1 }, { sk: 650, x: 1 }], { bypassDocumentValidation: true });
  await db.command({ collMod: 'levels', validator: { $jsonSchema: { required: ['x'], properties: { x: { bsonType: 'int' } } } }, validationLevel: 'moderate' });
  await c.updateOne({ sk: 600 }, { $set: { y: 2 } });
  for (const sk of [1, 650]) {
    assert.equal((await refusal(c.updateOne({ sk }, { $set: { x: 'one' } }))).code, 121, 'moderate: a valid document may not become invalid');
  }
  await db.command({ collMod: 'levels', validationAction: 'warn' });
  await c.insertOne({ sk: 700, x: 'seven' });
  await db.command({ collMod: 'levels', validationLevel: 'off', validationAction: 'error' });
  await c.insertOne({ sk: 8, x: 'eight' });
  assert.equal(await c.countDocuments({ $jsonSchema: { properties: { x: { bsonType: 'string' } }, required: ['x'] } }), 2);
}

async function badInput(db: Db, place: Place): Promise<void> {
  const unknown = await refusal(db.collection('inventory').find({ $jsonSchema: { requird: ['item'] } }).toArray());
  assert.deepEqual([unknown.code, unknown.message], [9, 'Unknown $jsonSchema keyword: requird']);
  const wrongType = await refusal(db.collection('inventory').countDocuments({ $jsonSchema: { properties: { qty: { minimum: 'ten' } } } }));
  assert.deepEqual([wrongType.code, wrongType.message], [14, "$jsonSchema keyword 'minimum' must be a number"]);
  const alias = await refusal(db.collection('inventory').find({ $jsonSchema: { properties: { qty: { bsonType: 'integer' } } } }).toArray());
  assert.equal(alias.code, 9);
  assert.equal((await refusal(db.createCollection('bad', { validator: { $jsonSchema: { format: 'email' } } }))).code, 9);
  assert.equal((await refusal(db.createCollection('bad', { validator: { $jsonSchema: { enum: [] } } }))).code, 9);
  assert.equal((await refusal(db.collection('inventory').updateMany({ $jsonSchema: 'x' }, { $set: { a: 1 } }))).code, 14);
  assert.equal((await refusal(db.createCollection('bad', { validator: { $jsonSchema: { properties: { ssn: { encrypt: {} } } } }, validationAction: 'warn' }))).code, 224);
  await place(db, 'encrypted', { validator: { $jsonSchema: { properties: { ssn: { encrypt: {} } } } } });
  assert.equal((await refusal(db.command({ collMod: 'encrypted', validationLevel: 'moderate' }))).code, 224, 'an encrypt validator keeps strict and error');
  assert.equal((await refusal(db.collection('encrypted').insertOne({ sk: 1, ssn: '123' }))).code, 121);
  assert.equal((await db.command({ ping: 1 })).ok, 1, 'the server keeps serving');
  assert.equal(await db.collection('inventory').countDocuments(inventorySchema), 5);
}

describe('$jsonSchema on a node', () => {
  let client: MongoClient;
  withNode({}, (f) => {
    client = f.client;
  });
  const place: Place = async (db, name, options) => {
    if (options !== undefined) await db.createCollection(name, options);
  };

  it('validates the manual\'s students example with MongoDB\'s errInfo', async () => studentsExample(client.db('schema'), place));
  it('finds, counts, updates and deletes with the manual\'s inventory schema', async () => inventoryExample(client.db('schema'), place));
  it('follows validationLevel and validationAction', async () => levelsAndActions(client.db('schema'), place));
  it('refuses bad schemas with MongoDB\'s errors and keeps serving', async () => badInput(client.db('schema'), place));
});

describe('$jsonSchema through a router, on collections sharded on another field', () => {
  let client: MongoClient;
  let cluster: SpawnedCluster;
  let connect: (uri: string) => MongoClient;
  withCluster({ shards: 2 }, async (f) => {
    ({ client, cluster } = f);
    connect = (uri) => f.connect(uri);
    await client.db('admin').command({ enableSharding: 'schema', primaryShard: 'shard0' });
  });
  // Created through the router (on the primary shard), sharded, and split so that shard1 holds
  // sk >= 100: the move creates the collection there with the validator the router set.
  const place: Place = async (db, name, options) => {
    if (options !== undefined) await db.createCollection(name, options);
    const admin = client.db('admin');
    const ns = `${db.databaseName}.${name}`;
    await admin.command({ shardCollection: ns, key: { sk: 1 } });
    await admin.command({ split: ns, middle: { sk: 100 } });
    await admin.command({ moveChunk: ns, find: { sk: 100 }, to: 'shard1', _waitForDelete: true });
  };

  it('validates the manual\'s students example on both shards, errInfo intact', async () => studentsExample(client.db('schema'), place));
  it('finds, counts, updates and deletes with the manual\'s inventory schema across shards', async () => inventoryExample(client.db('schema'), place));
  it('follows validationLevel and validationAction set by collMod through the router', async () => levelsAndActions(client.db('schema'), place));
  it('refuses bad schemas with MongoDB\'s errors and keeps serving', async () => badInput(client.db('schema'), place));

  it('applies a validator given at create on every shard of a hashed collection, with no migration', async () => {
    const db = client.db('schema');
    await db.createCollection('hashed', { validator: studentsValidator });
    await client.db('admin').command({ shardCollection: 'schema.hashed', key: { sk: 'hashed' } });
    const hashed = db.collection<AnyDoc>('hashed');
    const student = (sk: number, gpa: unknown): AnyDoc => ({ sk, name: 'Alice', year: new Int32(2019), major: 'History', gpa, address: { city: 'NYC' } });
    for (let sk = 0; sk < 20; sk++) {
      const refused = await refusal(hashed.insertOne(student(sk, new Int32(3))));
      assert.equal(refused.code, 121, `sk ${sk}`);
      assert.deepEqual(refused.errInfo?.details, studentsFailure, `sk ${sk}`);
      await hashed.insertOne(student(sk, new Double(3)));
    }
    const held = await Promise.all(cluster.shards.map((shard) => connect(shard.uri).db('schema').collection('hashed').countDocuments()));
    assert.ok(held.every((n) => n > 0), `every shard holds documents it validated: ${held.join(', ')}`);
    assert.equal(await hashed.countDocuments({ $jsonSchema: studentsValidator.$jsonSchema }), 20);
  });
});
