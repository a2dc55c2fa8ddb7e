import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { fail } from './operator_support.js';
import { compileDocExpression, type DocEvaluator, type StageEnv } from './stage_support.js';

// The tree behind $project, $addFields/$set and $unset. Each level maps a field name to what
// happens to it; expressions always see the whole document as $$CURRENT, whatever their depth.

type Child =
  | { kind: 'include' }
  | { kind: 'exclude' }
  | { kind: 'computed'; evaluate: DocEvaluator }
  | { kind: 'node'; node: ProjectionNode };

export class ProjectionNode {
  readonly children = new Map<string, Child>();

  hasComputed(): boolean {
    for (const c of this.children.values()) {
      if (c.kind === 'computed' || (c.kind === 'node' && c.node.hasComputed())) return true;
    }
    return false;
  }
}

export type ProjectionMode = 'inclusion' | 'exclusion' | 'addFields';

export interface Projection {
  mode: ProjectionMode;
  root: ProjectionNode;
}

function isOperatorObject(v: unknown): v is Doc {
  return isPlainObject(v) && Object.keys(v).length > 0 && Object.keys(v)[0]!.startsWith('$');
}

function checkFieldName(path: string, stage: string): string[] {
  const parts = path.split('.');
  for (const p of parts) {
    if (p === '') fail(40352, `Invalid ${stage} :: caused by :: FieldPath cannot be constructed with empty string`);
    if (p.startsWith('$')) fail(16410, `Invalid ${stage} :: caused by :: FieldPath field names may not start with '$'. Consider using $getField or $setField.`);
  }
  return parts;
}

function addChild(node: ProjectionNode, path: string[], child: Child, fullPath: string, stage: string): void {
  let current = node;
  for (let i = 0; i < path.length - 1; i++) {
    const existing = current.children.get(path[i]!);
    if (existing === undefined) {
      const next = new ProjectionNode();
      current.children.set(path[i]!, { kind: 'node', node: next });
      current = next;
    } else if (existing.kind === 'node') {
      current = existing.node;
    } else {
      fail(31250, `Invalid ${stage} :: caused by :: Path collision at ${fullPath} remaining portion ${path.slice(i + 1).join('.')}`);
    }
  }
  const last = path[path.length - 1]!;
  const existing = current.children.get(last);
  if (existing !== undefined) {
    if (existing.kind === 'node' && child.kind === 'node') {
      for (const [k, v] of child.node.children) existing.node.children.set(k, v);
      return;
    }
    fail(31250, `Invalid ${stage} :: caused by :: Path collision at ${fullPath}`);
  }
  current.children.set(last, child);
}

class Builder {
  included = false;
  excludedNonId = false;
  computed = false;

  constructor(readonly stage: string, readonly env: StageEnv, readonly addFields: boolean) {}

  parseLevel(node: ProjectionNode, spec: Doc, prefix: string): void {
    for (const key of Object.keys(spec)) {
      const value = spec[key];
      const fullPath = prefix + key;
      const path = checkFieldName(key, this.stage);
      addChild(node, path, this.parseValue(value, fullPath), fullPath, this.stage);
    }
  }

  parseValue(value: unknown, fullPath: string): Child {
    if (!this.addFields && (typeof value === 'boolean' || isNumber(value))) {
      const on = typeof value === 'boolean' ? value : toDouble(value) !== 0;
      if (on) {
        if (this.excludedNonId) fail(31253, `Invalid ${this.stage} :: caused by :: Cannot do inclusion on field ${fullPath} in exclusion projection`);
        this.included = true;
        return { kind: 'include' };
      }
      if (fullPath !== '_id') {
        if (this.included || this.computed) fail(31254, `Invalid ${this.stage} :: caused by :: Cannot do exclusion on field ${fullPath} in inclusion projection`);
        this.excludedNonId = true;
      }
      return { kind: 'exclude' };
    }
    if (isPlainObject(value) && !isOperatorObject(value) && (!this.addFields || Object.keys(value).length > 0)) {
      if (Object.keys(value).length === 0) fail(51270, `Invalid ${this.stage} :: caused by :: An empty sub-projection is not a valid value. Found empty object at path`);
      const node = new ProjectionNode();
      this.parseLevel(node, value, fullPath + '.');
      return { kind: 'node', node };
    }
    if (this.excludedNonId) fail(31252, `Invalid ${this.stage} :: caused by :: Cannot use expression other than $meta in exclusion projection`);
    this.computed = true;
    return { kind: 'computed', evaluate: compileDocExpression(value, this.env) };
  }
}

export function parseProjection(spec: unknown, env: StageEnv, stage: string): Projection {
  if (!isPlainObject(spec)) fail(15969, `${stage} specification must be an object`);
  if (Object.keys(spec).length === 0) fail(51272, `Invalid ${stage} :: caused by :: projection specification must have at least one field`);
  const builder = new Builder(stage, env, false);
  const root = new ProjectionNode();
  builder.parseLevel(root, spec, '');
  const exclusion = !builder.included && !builder.computed;
  if (!exclusion && !root.children.has('_id')) {
    const withId = new ProjectionNode();
    withId.children.set('_id', { kind: 'include' });
    for (const [k, v] of root.children) withId.children.set(k, v);
    return { mode: 'inclusion', root: withId };
  }
  return { mode: exclusion ? 'exclusion' : 'inclusion', root };
}

export function parseAddFields(spec: unknown, env: StageEnv, stage: string): Projection {
  if (!isPlainObject(spec)) fail(40272, `${stage} specification stage must be an object, got ${typeof spec}`);
  const builder = new Builder(stage, env, true);
  const root = new ProjectionNode();
  builder.parseLevel(root, spec, '');
  return { mode: 'addFields', root };
}

export function exclusionOf(paths: string[], stage: string): Projection {
  const root = new ProjectionNode();
  for (const p of paths) addChild(root, checkFieldName(p, stage), { kind: 'exclude' }, p, stage);
  return { mode: 'exclusion', root };
}

export function applyProjection(projection: Projection, doc: Doc, vars: Record<string, unknown>): Doc {
  switch (projection.mode) {
    case 'inclusion': return include(projection.root, doc, doc, vars);
    case 'exclusion': return exclude(projection.root, doc);
    case 'addFields': return addFields(projection.root, doc, doc, vars);
  }
}

function include(node: ProjectionNode, value: Doc, root: Doc, vars: Record<string, unknown>): Doc {
  const out: Doc = {};
  for (const key of Object.keys(value)) {
    const child = node.children.get(key);
    if (child === undefined) continue;
    const v = value[key];
    if (child.kind === 'include') out[key] = v;
    else if (child.kind === 'node') {
      const projected = includeValue(child.node, v, root, vars);
      if (projected !== undefined) out[key] = projected;
    }
  }
  for (const [key, child] of node.children) {
    if (child.kind === 'computed') {
      const v = child.evaluate(root, vars);
      if (v === undefined) delete out[key];
      else out[key] = v;
    } else if (child.kind === 'node' && !(key in out) && !(key in value) && child.node.hasComputed()) {
      out[key] = include(child.node, {}, root, vars);
    }
  }
  return out;
}

function includeValue(node: ProjectionNode, v: unknown, root: Doc, vars: Record<string, unknown>): unknown {
  if (isPlainObject(v)) return include(node, v, root, vars);
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const element of v) {
      const projected = Array.isArray(element) || isPlainObject(element)
        ? includeValue(node, element, root, vars)
        : node.hasComputed() ? include(node, {}, root, vars) : undefined;
      if (projected !== undefined) out.push(projected);
    }
    return out;
  }
  return node.hasComputed() ? include(node, {}, root, vars) : undefined;
}

function exclude(node: ProjectionNode, value: Doc): Doc {
  const out: Doc = {};
  for (const key of Object.keys(value)) {
    const child = node.children.get(key);
    const v = value[key];
    if (child === undefined || child.kind === 'include') out[key] = v;
    else if (child.kind === 'node') out[key] = excludeValue(child.node, v);
  }
  return out;
}

function excludeValue(node: ProjectionNode, v: unknown): unknown {
  if (isPlainObject(v)) return exclude(node, v);
  if (Array.isArray(v)) return v.map((element) => excludeValue(node, element));
  return v;
}

function addFields(node: ProjectionNode, value: Doc, root: Doc, vars: Record<string, unknown>): Doc {
  const out: Doc = { ...value };
  for (const [key, child] of node.children) {
    if (child.kind === 'computed') {
      const v = child.evaluate(root, vars);
      if (v === undefined) delete out[key];
      else out[key] = v;
    } else if (child.kind === 'node') {
      out[key] = addFieldsValue(child.node, out[key], root, vars);
    }
  }
  return out;
}

function addFieldsValue(node: ProjectionNode, v: unknown, root: Doc, vars: Record<string, unknown>): unknown {
  if (isPlainObject(v)) return addFields(node, v, root, vars);
  if (Array.isArray(v)) return v.map((element) => addFieldsValue(node, element, root, vars));
  return addFields(node, {}, root, vars);
}
