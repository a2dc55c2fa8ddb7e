import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { validatePipeline } from '../../query/agg/pipeline.js';
import { prepareFind } from '../../query/exec/find_query.js';
import { splitNamespace } from '../../storage/catalog_entry.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';
import { findTargets, type Target } from '../crud/write_ops.js';

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
  const found = viewDocument(storage, ns);
  return found === undefined ? undefined : definitionOf(found.target.doc);
}

// undefined when `ns` is not a view.
export function resolveView(storage: StorageEngine, ns: string): ResolvedView | undefined {
  let bottom: string | undefined;
  const pipeline: Doc[] = [];
  for (const view of viewChain(storage, ns)) {
    pipeline.unshift(...view.pipeline);
    bottom = view.viewOn;
  }
  return bottom === undefined ? undefined : { ns: bottom, pipeline };
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
  // The new view goes on top of the chain under it: that chain must not lead back to it, and
  // with it must stay within the depth limit.
  let depth = 0;
  for (const under of viewChain(storage, onNs)) {
    if (under.viewOn === ns) throw new MongoError(ErrorCodes.GraphContainsCycle, `View cycle detected: ${ns} => ${onNs}`);
    if (++depth >= MAX_VIEW_DEPTH) throw depthError();
  }
  storage.write((unit) => unit.insert(storage.ensureCollection(viewsNs(db)).coll, { _id: ns, viewOn, pipeline: stages }));
}

// false when `ns` is not a view.
export function dropView(storage: StorageEngine, ns: string): boolean {
  const found = viewDocument(storage, ns);
  if (found === undefined) return false;
  storage.write((unit) => unit.remove(found.coll, found.target.recordId, found.target.doc, found.target.size));
  return true;
}

// The view at `ns` and every view under it, top first; more than MAX_VIEW_DEPTH is an error (a
// cycle that slipped in, or a chain too deep).
function* viewChain(storage: StorageEngine, ns: string): Iterable<ViewDefinition> {
  let depth = 0;
  for (let view = getView(storage, ns); view !== undefined; view = getView(storage, view.viewOn)) {
    if (depth++ >= MAX_VIEW_DEPTH) throw depthError();
    yield view;
  }
}

// The document of the view at `ns` in its database's system.views, with where it is stored.
function viewDocument(storage: StorageEngine, ns: string): { coll: Collection; target: Target } | undefined {
  const coll = storage.getCollection(viewsNs(splitNamespace(ns).db));
  if (coll === undefined) return undefined;
  const [target] = findTargets(storage, coll, { _id: ns }, { limit: 1 });
  return target === undefined ? undefined : { coll, target };
}

function depthError(): MongoError {
  return new MongoError(ErrorCodes.ViewDepthLimitExceeded, `View depth too deep or view cycle detected. Maximum depth is ${MAX_VIEW_DEPTH}`);
}

export function notOnView(ns: string): MongoError {
  return new MongoError(ErrorCodes.CommandNotSupportedOnView, `Namespace ${ns} is a view, not a collection`);
}

function definitionOf(doc: Doc): ViewDefinition {
  const ns = String(doc._id);
  return { ns, viewOn: `${splitNamespace(ns).db}.${String(doc.viewOn)}`, pipeline: Array.isArray(doc.pipeline) ? (doc.pipeline as Doc[]) : [] };
}
