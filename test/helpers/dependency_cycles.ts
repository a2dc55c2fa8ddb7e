// The dependency graph between committed transactions (Adya's direct serialization graph) and the
// cycles in it that name isolation anomalies, searched as Elle searches them: strongly connected
// components first (Tarjan), then within each component the shortest cycle of each kind.

export type Rel = 'ww' | 'wr' | 'rw';
export type CycleKind = 'G0' | 'G1c' | 'G-single' | 'G2-item';

export interface Edge<Why> {
  from: number;
  to: number;
  rel: Rel;
  why: Why;
}

export interface Cycle<Why> {
  kind: CycleKind;
  edges: Edge<Why>[];
}

// Each kind is a cycle that starts with an edge of `first` and comes back along edges of `free`,
// plus at least `moreRw` further rw edges. The kinds do not overlap: G0 has ww edges only, G1c
// ww and at least one wr, G-single exactly one rw, G2-item two or more.
const KINDS: ReadonlyArray<{ kind: CycleKind; first: Rel; free: ReadonlySet<Rel>; moreRw: 0 | 1 }> = [
  { kind: 'G0', first: 'ww', free: new Set(['ww']), moreRw: 0 },
  { kind: 'G1c', first: 'wr', free: new Set(['ww', 'wr']), moreRw: 0 },
  { kind: 'G-single', first: 'rw', free: new Set(['ww', 'wr']), moreRw: 0 },
  { kind: 'G2-item', first: 'rw', free: new Set(['ww', 'wr']), moreRw: 1 },
];

const STRENGTH: Record<Rel, number> = { ww: 0, wr: 1, rw: 2 };

export class DependencyGraph<Why> {
  private readonly out = new Map<number, Map<number, Edge<Why>>>();

  // Two transactions related in several ways keep one edge, the strongest relation (ww, then wr,
  // then rw) with its first reason: a cycle is then reported as the most severe kind it can be
  // read as, and never as G-single or G2-item where a reading without anti-dependencies exists.
  add(from: number, to: number, rel: Rel, why: Why): void {
    if (from === to) return;
    let edges = this.out.get(from);
    if (edges === undefined) this.out.set(from, (edges = new Map()));
    const known = edges.get(to);
    if (known === undefined || STRENGTH[rel] < STRENGTH[known.rel]) edges.set(to, { from, to, rel, why });
  }

  // For each component and each kind, the shortest cycle of that kind, if it has one.
  cycles(): Cycle<Why>[] {
    const found: Cycle<Why>[] = [];
    for (const component of this.components()) {
      if (component.length < 2) continue;
      const members = new Set(component);
      for (const spec of KINDS) {
        const cycle = this.shortestCycle(members, spec);
        if (cycle !== undefined) found.push({ kind: spec.kind, edges: fromLowest(cycle) });
      }
    }
    return found;
  }

  private successors(node: number): Edge<Why>[] {
    return [...(this.out.get(node)?.values() ?? [])];
  }

  // Tarjan's algorithm, iterative so that a long chain of transactions cannot overflow the stack.
  private components(): number[][] {
    const nodes = [...new Set([...this.out.keys(), ...[...this.out.values()].flatMap((m) => [...m.keys()])])].sort((a, b) => a - b);
    const index = new Map<number, number>();
    const low = new Map<number, number>();
    const onStack = new Set<number>();
    const stack: number[] = [];
    const components: number[][] = [];
    for (const root of nodes) {
      if (index.has(root)) continue;
      const work: Array<{ node: number; next: number; succ: number[] }> = [];
      const visit = (node: number): void => {
        index.set(node, index.size);
        low.set(node, index.get(node)!);
        stack.push(node);
        onStack.add(node);
        work.push({ node, next: 0, succ: this.successors(node).map((e) => e.to) });
      };
      visit(root);
      while (work.length > 0) {
        const frame = work[work.length - 1]!;
        if (frame.next < frame.succ.length) {
          const next = frame.succ[frame.next++]!;
          if (!index.has(next)) visit(next);
          else if (onStack.has(next)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(next)!));
          continue;
        }
        work.pop();
        const parent = work[work.length - 1];
        if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
        if (low.get(frame.node) === index.get(frame.node)) {
          const component: number[] = [];
          let member: number;
          do {
            member = stack.pop()!;
            onStack.delete(member);
            component.push(member);
          } while (member !== frame.node);
          components.push(component.sort((a, b) => a - b));
        }
      }
    }
    return components;
  }

  // One breadth-first search from each node b gives the shortest way back from b to every a with
  // an edge a -> b of the kind's first relation; the shortest of those closes the cycle. Each search
  // stops at the length of the best cycle found so far. Searching G2-item over (node, rw) states can
  // return a walk that passes a transaction twice: that walk is two G-single cycles, reported as
  // such, so it is passed over.
  private shortestCycle(members: ReadonlySet<number>, spec: (typeof KINDS)[number]): Edge<Why>[] | undefined {
    const into = new Map<number, Edge<Why>[]>();
    for (const a of members) {
      for (const edge of this.successors(a)) {
        if (edge.rel !== spec.first || !members.has(edge.to)) continue;
        if (!into.has(edge.to)) into.set(edge.to, []);
        into.get(edge.to)!.push(edge);
      }
    }
    let best: Edge<Why>[] | undefined;
    for (const [b, firsts] of [...into].sort(([x], [y]) => x - y)) {
      const pathTo = this.pathsFrom(b, members, spec, best === undefined ? members.size - 1 : best.length - 2);
      for (const first of firsts) {
        const back = pathTo(first.from);
        if (back === undefined || (best !== undefined && back.length + 1 >= best.length)) continue;
        const cycle = [first, ...back];
        if (new Set(cycle.map((e) => e.from)).size === cycle.length) best = cycle;
      }
    }
    return best;
  }

  // States are (node, rw edges taken so far, capped at moreRw), numbered node * 2 + rw; a way back
  // must end having taken all moreRw of them, in at most maxLength edges.
  private pathsFrom(start: number, members: ReadonlySet<number>, spec: (typeof KINDS)[number], maxLength: number): (target: number) => Edge<Why>[] | undefined {
    const cameBy = new Map<number, { edge: Edge<Why>; prev: number; length: number } | null>([[start * 2, null]]);
    const queue: number[] = [start * 2];
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head]!;
      const length = cameBy.get(state)?.length ?? 0;
      if (length >= maxLength) break;
      for (const edge of this.successors(Math.floor(state / 2))) {
        if (!members.has(edge.to)) continue;
        const takesRw = edge.rel === 'rw' && spec.moreRw > 0;
        if (!spec.free.has(edge.rel) && !takesRw) continue;
        const next = edge.to * 2 + Math.min(spec.moreRw, (state % 2) + (takesRw ? 1 : 0));
        if (cameBy.has(next)) continue;
        cameBy.set(next, { edge, prev: state, length: length + 1 });
        queue.push(next);
      }
    }
    return (target) => {
      let state = target * 2 + spec.moreRw;
      if (!cameBy.has(state)) return undefined;
      const path: Edge<Why>[] = [];
      for (let step = cameBy.get(state); step; step = cameBy.get(state)) {
        path.unshift(step.edge);
        state = step.prev;
      }
      return path;
    };
  }
}

// A cycle told from its lowest-numbered transaction, so that one cycle always reads the same.
function fromLowest<Why>(cycle: Edge<Why>[]): Edge<Why>[] {
  const start = cycle.reduce((best, edge, i) => (edge.from < cycle[best]!.from ? i : best), 0);
  return [...cycle.slice(start), ...cycle.slice(0, start)];
}
