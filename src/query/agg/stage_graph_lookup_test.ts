import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { withCollation, parseCollation } from '../../bson/collation.js';
import fc from 'fast-check';
import { Double, Long, type Doc } from '../../bson/values.js';
import { compileFilter } from '../match/matcher.js';
import { runPipeline, validatePipeline } from './pipeline.js';
import { explainGraphLookup } from './stage_graph_lookup.js';
import { airports, employees, people, travelers } from './stage_graph_lookup_cases.js';

const collections: Record<string, Doc[]> = { employees, airports, people };

function agg(pipeline: Doc[], input: Doc[]): Doc[] {
  validatePipeline(pipeline);
  return [...runPipeline(pipeline, input, { db: 'test', readCollection: (name) => collections[name] ?? [] })];
}

function names(docs: unknown): string[] {
  return (docs as Doc[]).map((d) => String(d.name)).sort();
}

function rejects(spec: unknown, code: number, message?: RegExp): void {
  assert.throws(() => agg([{ $graphLookup: spec } as Doc], [{ _id: 0 }]), (err: unknown) => {
    assert.ok(err instanceof MongoError, String(err));
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

const base = { from: 'foreign', startWith: { $literal: 0 }, connectToField: 'a', connectFromField: 'b', as: 'output' };

describe('$graphLookup', () => {
  it('finds the reporting hierarchy of the manual example', () => {
    const out = agg([{ $graphLookup: { from: 'employees', startWith: '$reportsTo', connectFromField: 'reportsTo', connectToField: 'name', as: 'reportingHierarchy' } }], employees);
    const hierarchy = Object.fromEntries(out.map((d) => [d.name, names(d.reportingHierarchy)]));
    assert.deepEqual(hierarchy, {
      Dev: [], Eliot: ['Dev'], Ron: ['Dev', 'Eliot'], Andrew: ['Dev', 'Eliot'], Asya: ['Dev', 'Eliot', 'Ron'], Dan: ['Andrew', 'Dev', 'Eliot'],
    });
    assert.deepEqual(out[2]!.reportingHierarchy, [employees[1], employees[0]]);
  });

  it('stops at maxDepth and reports each airport at its depth, as the airports example', () => {
    const out = agg([{ $graphLookup: { from: 'airports', startWith: '$nearestAirport', connectFromField: 'connects', connectToField: 'airport', maxDepth: 2, depthField: 'numConnections', as: 'destinations' } }], travelers);
    const depths = (d: Doc): Record<string, number> => Object.fromEntries((d.destinations as Doc[]).map((a) => [a.airport, (a.numConnections as Long).toNumber()]));
    assert.deepEqual(depths(out[0]!), { JFK: 0, BOS: 1, ORD: 1, PWM: 2 });
    assert.deepEqual(depths(out[1]!), { JFK: 0, BOS: 1, ORD: 1, PWM: 2 });
    assert.deepEqual(depths(out[2]!), { BOS: 0, JFK: 1, PWM: 1, ORD: 2, LHR: 2 });
    assert.ok((out[0]!.destinations as Doc[])[0]!.numConnections instanceof Long);
    const shallow = agg([{ $graphLookup: { from: 'airports', startWith: '$nearestAirport', connectFromField: 'connects', connectToField: 'airport', maxDepth: 0, as: 'd' } }], travelers);
    assert.deepEqual(shallow.map((t) => (t.d as Doc[]).map((a) => a.airport)), [['JFK'], ['JFK'], ['BOS']]);
  });

  it('follows only documents that pass restrictSearchWithMatch, as the golfers example', () => {
    const out = agg([
      { $match: { name: 'Tanya Jordan' } },
      { $graphLookup: { from: 'people', startWith: '$friends', connectFromField: 'friends', connectToField: 'name', as: 'golfers', restrictSearchWithMatch: { hobbies: 'golf' } } },
      { $project: { name: 1, friends: 1, 'connections who play golf': '$golfers.name' } },
    ], people);
    assert.equal(out.length, 1);
    assert.deepEqual([...(out[0]!['connections who play golf'] as string[])].sort(), ['Angelo Ward', 'Carole Hale', 'Joseph Dennis', 'Tanya Jordan']);
  });

  it('matches under the collation in force, and a missing connectToField connects to nothing', () => {
    const foreign = [{ _id: 1, name: 'ADA' }, { _id: 2 }, { _id: 3, name: null }];
    collections.foreign = foreign;
    const pipeline = [{ $graphLookup: { from: 'foreign', startWith: '$x', connectFromField: 'none', connectToField: 'name', as: 'out' } }];
    assert.deepEqual(agg(pipeline, [{ x: 'ada' }])[0]!.out, []);
    const collated = withCollation(parseCollation({ locale: 'en', strength: 2 }), () => agg(pipeline, [{ x: 'ada' }]));
    assert.deepEqual(collated[0]!.out, [foreign[0]]);
    assert.deepEqual(agg(pipeline, [{ x: null }])[0]!.out, [foreign[2]]);
    assert.deepEqual(agg(pipeline, [{}])[0]!.out, []);
  });

  it('refuses a foreign document without _id', () => {
    collections.foreign = [{ a: 0 }];
    rejects(base, 40271);
  });

  it("answers MongoDB's errors for bad arguments", () => {
    rejects(4, ErrorCodes.FailedToParse, /must be an object, but found int/);
    rejects({ ...base, maxDepth: 'string' }, 40100);
    rejects({ ...base, maxDepth: -1 }, 40101);
    rejects({ ...base, maxDepth: 2.3 }, 40102);
    rejects({ ...base, from: -1 }, ErrorCodes.FailedToParse, /'from' field must be a string/);
    rejects({ ...base, from: '' }, ErrorCodes.InvalidNamespace);
    rejects({ ...base, as: 0 }, 40103, /expected string as argument for as, found: int/);
    rejects({ ...base, as: '$output' }, 16410);
    rejects({ ...base, connectFromField: 0 }, 40103);
    rejects({ ...base, connectFromField: '$b' }, 16410);
    rejects({ ...base, connectToField: 0 }, 40103);
    rejects({ ...base, connectToField: '$a' }, 16410);
    rejects({ ...base, depthField: 0 }, 40103);
    rejects({ ...base, depthField: '$depth' }, 16410);
    rejects({ ...base, restrictSearchWithMatch: 'notamatch' }, 40185);
    rejects({ ...base, notAField: 'foo' }, 40104, /Unknown argument to \$graphLookup: notAField/);
    const { connectToField: _t, connectFromField: _f, startWith: _s, as: _a, from: _from, ...none } = base;
    rejects({ ...none, startWith: 0, connectFromField: 'b', as: 'o', from: 'f' }, 40105);
    rejects({ ...none, startWith: 0, connectToField: 'a', as: 'o', from: 'f' }, 40105);
    rejects({ ...none, connectToField: 'a', connectFromField: 'b', as: 'o', from: 'f' }, 40105);
    rejects({ ...none, startWith: 0, connectToField: 'a', connectFromField: 'b', from: 'f' }, 40105);
    rejects({ ...none, startWith: 0, connectToField: 'a', connectFromField: 'b', as: 'o' }, ErrorCodes.FailedToParse, /missing 'from'/);
    rejects({ ...base, restrictSearchWithMatch: { $not: { a: 1 } } }, ErrorCodes.BadValue, /restrictSearchWithMatch/);
    rejects({ ...base, restrictSearchWithMatch: { $where: '3 > 2' } }, ErrorCodes.BadValue, /\$where is not allowed/);
    rejects({ ...base, restrictSearchWithMatch: { $text: { $search: 'x' } } }, ErrorCodes.BadValue, /\$text is not allowed/);
    rejects({ ...base, restrictSearchWithMatch: { $and: [{ x: { $near: [0, 0] } }] } }, ErrorCodes.BadValue, /\$near/);
  });

  it('fails at run time as its restriction does', () => {
    collections.foreign = [{ _id: 1, a: 0, x: 0 }];
    rejects({ ...base, restrictSearchWithMatch: { $expr: { $divide: [1, '$x'] } } }, 16608);
  });

  it('shows in explain as MongoDB does, with a following $unwind of its output folded in', () => {
    const stage = { $graphLookup: { ...base, maxDepth: 3, depthField: 'd' } };
    const { explained, absorbed } = explainGraphLookup(stage, { $unwind: '$output' });
    assert.equal(absorbed, true);
    assert.deepEqual(explained, {
      $graphLookup: {
        from: 'foreign', as: 'output', connectToField: 'a', connectFromField: 'b', startWith: { $literal: 0 }, depthField: 'd', maxDepth: Long.fromNumber(3),
        unwinding: { preserveNullAndEmptyArrays: false },
      },
    });
    assert.equal(explainGraphLookup(stage, { $unwind: '$other' }).absorbed, false);
  });
});

// A search that reads every foreign document each round, as the reference for the one that looks
// the frontier's values up.
function scanSearch(foreign: Doc[], start: unknown[], from: string, to: string): Map<unknown, number> {
  const depths = new Map<unknown, number>();
  let frontier = start;
  for (let depth = 0; frontier.length > 0; depth++) {
    const clauses: Doc[] = [{ [to]: { $in: frontier } }];
    if (frontier.some((v) => v === null)) clauses.push({ [to]: { $exists: true } });
    const matcher = compileFilter({ $and: clauses });
    const next: unknown[] = [];
    for (const doc of foreign) {
      if (!matcher.matches(doc) || depths.has(doc._id)) continue;
      depths.set(doc._id, depth);
      const v = doc[from];
      if (Array.isArray(v)) next.push(...v);
      else if (v !== undefined) next.push(v);
    }
    frontier = next;
  }
  return depths;
}

describe('$graphLookup on random graphs', () => {
  it('finds what reading every document each round finds', () => {
    const value = fc.oneof(
      fc.integer({ min: 0, max: 5 }), fc.constantFrom(1.0, new Double(2), Long.fromNumber(3), null, 'a', 'b', [1, 2], [[1, 2]], { x: 1 }),
    );
    const field = fc.option(fc.oneof(value, fc.array(value, { maxLength: 3 })), { nil: undefined });
    const doc = fc.record({ from: field, to: field }, { requiredKeys: [] });
    fc.assert(fc.property(fc.array(doc, { maxLength: 12 }), fc.array(value, { maxLength: 3 }), (raw, start) => {
      const foreign = raw.map((d, i) => ({ _id: i, ...d }));
      collections.random = foreign;
      const [out] = agg([{ $graphLookup: { from: 'random', startWith: { $literal: start }, connectFromField: 'from', connectToField: 'to', depthField: 'd', as: 'found' } }], [{ _id: 'x' }]);
      const found = new Map((out!.found as Doc[]).map((d) => [d._id, (d.d as Long).toNumber()]));
      assert.deepEqual(found, scanSearch(foreign, start, 'from', 'to'));
    }), { numRuns: 300 });
  });
});

describe('$graphLookup run one document at a time', () => {
  it('reads a collection handed out as the same array once, as a router hands it out', () => {
    let reads = 0;
    const source = [...employees];
    const counted = new Proxy(source, {
      get(target, key, receiver) {
        if (key === Symbol.iterator) reads += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    const stage = [{ $graphLookup: { from: 'employees', startWith: '$reportsTo', connectFromField: 'reportsTo', connectToField: 'name', as: 'chain' } }];
    let current: Doc[] = [];
    const run = runPipeline(stage, { [Symbol.iterator]: () => current[Symbol.iterator]() }, { db: 'test', readCollection: () => counted });
    const chains = employees.map((e) => {
      current = [e];
      return names([...run][0]!.chain);
    });
    assert.deepEqual(chains, [[], ['Dev'], ['Dev', 'Eliot'], ['Dev', 'Eliot'], ['Dev', 'Eliot', 'Ron'], ['Andrew', 'Dev', 'Eliot']]);
    assert.equal(reads, 1);
  });
});
