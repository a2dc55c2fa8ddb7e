import type { s2 } from 's2js';

// s2js's Loop.validate, like the Go library it ports, does not look for edges that cross, which
// MongoDB's S2Loop::IsValid refuses, and s2js does not export its crossing predicate: this is S2's
// SimpleCrossing (edges AB and CD cross at a point interior to both) over every pair of
// non-adjacent edges. Rings of a few thousand vertices at most make the quadratic walk cheap.
export function loopCrossing(vertices: readonly s2.Point[]): [number, number] | undefined {
  const n = vertices.length;
  for (let i = 0; i < n; i++) {
    for (let j = i + 2; j < n; j++) {
      if (i === 0 && j === n - 1) continue;
      if (edgesCross(vertices[i]!, vertices[(i + 1) % n]!, vertices[j]!, vertices[(j + 1) % n]!)) return [i, j];
    }
  }
  return undefined;
}

// Whether the great-circle arcs AB and CD cross at a point interior to both.
export function edgesCross(a: s2.Point, b: s2.Point, c: s2.Point, d: s2.Point): boolean {
  const ab = a.vector.cross(b.vector);
  const acb = -ab.dot(c.vector);
  const bda = ab.dot(d.vector);
  if (acb * bda <= 0) return false;
  const cd = c.vector.cross(d.vector);
  const cbd = -cd.dot(b.vector);
  const dac = cd.dot(a.vector);
  return acb * cbd > 0 && acb * dac > 0;
}
