import { parseCollation, type StringComparator } from '../../bson/collation.js';
import type { StorageEngine } from '../../storage/storage_engine.js';

// The collation a command on `ns` runs under, as MongoDB resolves it: the command's own
// `collation` when it gives one ({locale: 'simple'} asks for binary comparison), else the
// collection's default (create's `collation` option), else none.
export function commandCollation(storage: StorageEngine, ns: string, specified: unknown): StringComparator | undefined {
  if (specified !== undefined && specified !== null) return parseCollation(specified);
  const collectionDefault = storage.getCollection(ns)?.entry.options.collation;
  return collectionDefault === undefined ? undefined : parseCollation(collectionDefault);
}
