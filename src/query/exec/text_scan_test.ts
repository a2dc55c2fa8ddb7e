import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Double } from 'bson';
import type { Doc } from '../../bson/values.js';
import { withEngine } from '../../storage/test_support.js';
import { normalizeTextIndexSpec, textIndexSpec } from '../../storage/fts/text_index_spec.js';
import { indexedStrings, termScores } from '../../storage/fts/text_keys.js';
import { textTerms } from '../../storage/fts/tokenizer.js';
import { prepareFind } from './find_query.js';
import { parseTextQuery, passesTextFilter } from './text_query.js';

const WORDS = ['run', 'running', 'Runs', 'RUNNER', 'café', 'Cafe', 'cafés', 'the', 'and', 'shop', 'Shopping', 'coffee', 'cake', 'cakes', 'baking', "don't", 'walk'];
const text = fc.array(fc.constantFrom(...WORDS), { maxLength: 6 }).map((w) => w.join(' '));
const docArb = fc.record({ title: text, body: fc.array(text, { maxLength: 2 }), language: fc.constantFrom(undefined, 'none', 'english') });
const searchArb = fc.record({
  words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
  negated: fc.option(fc.constantFrom(...WORDS), { nil: undefined }),
  phrase: fc.option(fc.array(fc.constantFrom(...WORDS), { minLength: 2, maxLength: 2 }).map((w) => w.join(' ')), { nil: undefined }),
  caseSensitive: fc.boolean(),
  diacriticSensitive: fc.boolean(),
});

const INDEX = normalizeTextIndexSpec({ v: 2, key: { title: 'text', body: 'text' }, name: 'text', weights: { title: 3 } });

function withoutUndefined(doc: Doc): Doc {
  return Object.fromEntries(Object.entries(doc).filter(([, v]) => v !== undefined));
}

// What $text answers, worked out document by document from the documents as they end up, with no
// index: a document matches when it holds a searched term (as its own language makes terms of its
// strings) and passes the phrases and negations; its score is what those terms are worth in it.
function expected(docs: Map<number, Doc>, arg: Doc): Map<number, number> {
  const spec = textIndexSpec(INDEX);
  const query = parseTextQuery(arg, spec);
  const out = new Map<number, number>();
  for (const [id, doc] of docs) {
    const strings = indexedStrings(doc, spec);
    const terms = new Set(strings.flatMap((s) => textTerms(s.text, s.language)));
    if (!query.indexTerms.some((t) => terms.has(t)) || !passesTextFilter(query, strings)) continue;
    let score = 0;
    for (const [term, value] of termScores(doc, spec)) if (query.indexTerms.includes(term)) score += value;
    out.set(id, score);
  }
  return out;
}

describe('$text through the text index', () => {
  it('answers what a document-by-document evaluation answers, after inserts, updates and deletes', withEngine((engine) => {
    let run = 0;
    fc.assert(fc.property(fc.array(docArb, { maxLength: 20 }), fc.array(fc.tuple(fc.nat(), docArb)), fc.array(fc.nat()), searchArb, (inserted, updates, deletes, search) => {
      const coll = engine.createCollection(`t.c${run++}`);
      engine.createIndexes(coll, [INDEX]);
      const docs = new Map<number, Doc>();
      engine.write((unit) => {
        inserted.forEach((d, i) => {
          const doc = withoutUndefined({ _id: i, ...d });
          unit.insert(coll, doc);
          docs.set(i, doc);
        });
      });
      for (const [at, d] of updates) {
        if (inserted.length === 0) break;
        const id = at % inserted.length;
        const before = docs.get(id);
        if (before === undefined) continue;
        const after = withoutUndefined({ _id: id, ...d });
        const [found] = prepareFind(engine, coll, { filter: { _id: id } }).results;
        engine.write((unit) => unit.update(coll, found!.recordId, before, found!.bytes!.length, after));
        docs.set(id, after);
      }
      for (const at of deletes) {
        if (inserted.length === 0) break;
        const id = at % inserted.length;
        const [found] = prepareFind(engine, coll, { filter: { _id: id } }).results;
        if (found === undefined) continue;
        engine.write((unit) => unit.remove(coll, found.recordId, found.doc, found.bytes!.length));
        docs.delete(id);
      }
      const negation = search.negated === undefined ? '' : ` -${search.negated}`;
      const phrase = search.phrase === undefined ? '' : ` "${search.phrase}"`;
      const arg = { $search: search.words.join(' ') + negation + phrase, $caseSensitive: search.caseSensitive, $diacriticSensitive: search.diacriticSensitive };
      const prepared = prepareFind(engine, coll, { filter: { $text: arg }, projection: { s: { $meta: 'textScore' } } });
      const results = [...prepared.results];
      assert.equal(results.every((r) => r.doc.s instanceof Double), true, 'a score is a double, as mongod sends it');
      const got = new Map(results.map((r) => [r.doc._id as number, Number(r.doc.s)]));
      assert.deepEqual(got, expected(docs, arg));
      assert.equal(prepared.plan?.kind, 'IXSCAN');
      assert.equal(prepared.stats.docsExamined <= docs.size, true);
    }), { numRuns: 60 });
  }));
});

describe('$text as a clause of $or', () => {
  it('finds what the text search finds and what each indexed clause finds, once each; an unindexed clause is refused as MongoDB refuses it', withEngine((engine) => {
    const coll = engine.createCollection('t.or');
    engine.createIndexes(coll, [INDEX, { v: 2, key: { n: 1 }, name: 'n_1' }]);
    engine.write((unit) => {
      unit.insert(coll, { _id: 1, title: 'coffee shop', n: 1 });
      unit.insert(coll, { _id: 2, title: 'cake', n: 2 });
      unit.insert(coll, { _id: 3, title: 'coffee cake', n: 3 });
      unit.insert(coll, { _id: 4, title: 'walk', n: 4, k: 'x' });
    });
    const find = (filter: Doc) => {
      const prepared = prepareFind(engine, coll, { filter, projection: { s: { $meta: 'textScore' } } });
      return [...prepared.results].map((r) => [r.doc._id, r.doc.s === undefined ? null : Number(r.doc.s) > 0]);
    };
    assert.deepEqual(find({ $or: [{ $text: { $search: 'coffee' } }, { n: { $gte: 3 } }] }), [[1, true], [3, true], [4, null]]);
    assert.deepEqual(find({ $or: [{ $text: { $search: 'coffee' } }, { n: 2 }], n: { $lt: 3 } }), [[1, true], [2, null]], 'the rest of the filter applies to both');
    assert.deepEqual(find({ $and: [{ $or: [{ $text: { $search: 'cake' }, n: 2 }, { _id: 4 }] }] }), [[2, true], [4, null]], 'in a top-level $and, the text clause with its own condition');
    assert.throws(() => find({ $or: [{ $text: { $search: 'coffee' } }, { k: 'x' }] }), { code: 291, message: /TEXT under OR/ });
    assert.throws(() => find({ $or: [{ $text: { $search: 'coffee' } }, { $text: { $search: 'cake' } }] }), { code: 2, message: 'Too many text expressions' });
  }));
});
