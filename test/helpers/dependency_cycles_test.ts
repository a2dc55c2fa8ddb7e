import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DependencyGraph, type Rel } from './dependency_cycles.js';

function graphOf(edges: Array<[number, number, Rel]>): DependencyGraph<string> {
  const graph = new DependencyGraph<string>();
  for (const [from, to, rel] of edges) graph.add(from, to, rel, `${from}${rel}${to}`);
  return graph;
}

const kinds = (graph: DependencyGraph<string>): Array<[string, string[]]> => graph.cycles().map((c) => [c.kind, c.edges.map((e) => e.why)]);

test('an acyclic graph, or one with self-dependencies only, has no cycle', () => {
  assert.deepEqual(kinds(graphOf([[0, 1, 'ww'], [1, 2, 'wr'], [0, 2, 'rw'], [2, 2, 'rw']])), []);
});

test('a chain of 100000 transactions is searched without recursion', () => {
  const chain = graphOf(Array.from({ length: 100_000 }, (_, i): [number, number, Rel] => [i, i + 1, 'ww']));
  assert.deepEqual(chain.cycles(), []);
  const ring = graphOf(Array.from({ length: 2_000 }, (_, i): [number, number, Rel] => [i, (i + 1) % 2_000, 'ww']));
  assert.deepEqual(ring.cycles().map((c) => [c.kind, c.edges.length, c.edges[0]!.from]), [['G0', 2_000, 0]]);
});

test('of several cycles of one kind, the shortest is reported', () => {
  const graph = graphOf([[0, 1, 'wr'], [1, 2, 'ww'], [2, 3, 'ww'], [3, 0, 'ww'], [2, 0, 'wr']]);
  assert.deepEqual(kinds(graph), [['G1c', ['0wr1', '1ww2', '2wr0']]]);
});

test('each kind is searched apart, in one component', () => {
  const graph = graphOf([[0, 1, 'ww'], [1, 0, 'ww'], [1, 2, 'wr'], [2, 0, 'rw'], [2, 3, 'rw'], [3, 1, 'rw']]);
  assert.deepEqual(kinds(graph), [
    ['G0', ['0ww1', '1ww0']],
    ['G-single', ['0ww1', '1wr2', '2rw0']],
    ['G2-item', ['1wr2', '2rw3', '3rw1']],
  ]);
});

test('a pair related in several ways keeps its strongest relation', () => {
  const graph = graphOf([[0, 1, 'rw'], [0, 1, 'wr'], [1, 0, 'ww']]);
  assert.deepEqual(kinds(graph), [['G1c', ['0wr1', '1ww0']]]);
});

test('two G-single cycles through one transaction are not a G2-item', () => {
  // 0 -rw-> 1 -ww-> 0 and 0 -rw-> 2 -ww-> 0: the walk through both passes 0 twice.
  const graph = graphOf([[0, 1, 'rw'], [1, 0, 'ww'], [0, 2, 'rw'], [2, 0, 'ww']]);
  assert.deepEqual(kinds(graph).map(([kind]) => kind), ['G-single']);
});
