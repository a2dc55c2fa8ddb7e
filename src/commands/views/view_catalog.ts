import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { validatePipeline } from '../../query/agg/pipeline.js';
import { prepareFind } from '../../query/exec/find_query.js';
import { splitNamespace } from '../../storage/catalog_entry.js';
import type { StorageEngine } from '../../storage/storage_engine.js';
import { findTargets } from '../crud/write_ops.js';

// Views as MongoDB keeps them: one document per view in the database's `system.views` collection,
// {_id: "db.view", viewOn: "coll", pipeline: [...]}, read on every use (no cache to keep true).
export interface ViewDefinition {
  ns: string;
  viewOn: string;
  pipeline: Doc[];
}

// What a read of a view runs: the pipelines of the view and of every view under it, in order,
// over the collection at the bottom.
export interface ResolvedView {
  ns: string;
  pipeline: Doc[];
}

// MongoDB's ViewGraph::kMaxViewDepth.
const MAX_VIEW_DEPTH = 20;

function viewsNs(db: string): string {
  return `${db}.system.views`;
}

export function listViews(storage: StorageEngine, db: string): ViewDefinition[] {
  const coll = storage.getCollection(viewsNs(db));
  if (coll === undefined) return [];
  const views: ViewDefinition[] = [];
  for (const { doc } of prepareFind(storage, coll, { filter: {} }).results) views.push(definitionOf(doc));
  return views;
}

export function getView(storage: StorageEngine, ns: string): ViewDefinition | undefined {
  const coll = storage.getCollection(viewsNs(splitNamespace(ns).db));
  if (coll === undefined) return undefined;
  const [found] = findTargets(storage, coll, { _id: ns }, { limit: 1 });
  return found === undefined ? undefined : definitionOf(found.doc);
}

// undefined when `ns` is not a view.
export function resolveView(storage: StorageEngine, ns: string): ResolvedView | undefined {
  let view = getView(storage, ns);
  if (view === undefined) return undefined;
  const pipeline: Doc[] = [];
  for (let depth = 0; ; depth++) {
    if (depth >= MAX_VIEW_DEPTH) throw new MongoError(ErrorCodes.ViewDepthLimitExceeded, `View depth too deep or view cycle detected. Maximum depth is ${MAX_VIEW_DEPTH}`);
    pipeline.unshift(...view.pipeline);
    const under = getView(storage, view.viewOn);
    if (under === undefined) return { ns: view.viewOn, pipeline };
    view = under;
  }
}

export function createView(storage: StorageEngine, ns: string, viewOn: unknown, pipeline: unknown): void {
  if (typeof viewOn !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, "'viewOn' must be of type string");
  if (viewOn === '') throw new MongoError(ErrorCodes.BadValue, "'viewOn' cannot be empty");
  const stages: unknown = pipeline ?? [];
  if (!Array.isArray(stages)) throw new MongoError(ErrorCodes.TypeMismatch, "'pipeline' must be of type array");
  validatePipeline(stages);
  for (const stage of stages) {
    const name = Object.keys(stage)[0];
    if (name === '$out' || name === '$merge') throw new MongoError(ErrorCodes.OptionNotSupportedOnView, `${name} cannot be used in a view definition`);
  }
  const { db } = splitNamespace(ns);
  if (storage.getCollection(ns) !== undefined || getView(storage, ns) !== undefined) {
    throw new MongoError(ErrorCodes.NamespaceExists, `Namespace ${ns} already exists`);
  }
  const onNs = `${db}.${viewOn}`;
  if (onNs === ns) throw new MongoError(ErrorCodes.GraphContainsCycle, `View cycle detected: ${ns} => ${onNs}`);
  for (let under = getView(storage, onNs), depth = 1; under !== undefined; under = getView(storage, under.viewOn), depth++) {
    if (under.viewOn === ns) throw new MongoError(ErrorCodes.GraphContainsCycle, `View cycle detected: ${ns} => ${onNs}`);
    if (depth >= MAX_VIEW_DEPTH) throw new MongoError(ErrorCodes.ViewDepthLimitExceeded, `View depth too deep or view cycle detected. Maximum depth is ${MAX_VIEW_DEPTH}`);
  }
  storage.write((unit) => unit.insert(storage.ensureCollection(viewsNs(db)).coll, { _id: ns, viewOn, pipeline: stages }));
}

// false when `ns` is not a view.
export function dropView(storage: StorageEngine, ns: string): boolean {
  const coll = storage.getCollection(viewsNs(splitNamespace(ns).db));
  if (coll === undefined) return false;
  const [found] = findTargets(storage, coll, { _id: ns }, { limit: 1 });
  if (found === undefined) return false;
  storage.write((unit) => unit.remove(coll, found.recordId, found.doc, found.size));
  return true;
}

export function notOnView(ns: string): MongoError {
  return new MongoError(ErrorCodes.CommandNotSupportedOnView, `Namespace ${ns} is a view, not a collection`);
}

function definitionOf(doc: Doc): ViewDefinition {
  const ns = String(doc._id);
  return { ns, viewOn: `${splitNamespace(ns).db}.${String(doc.viewOn)}`, pipeline: Array.isArray(doc.pipeline) ? (doc.pipeline as Doc[]) : [] };
}
