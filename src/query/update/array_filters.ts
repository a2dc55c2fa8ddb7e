import { mongoError } from '../../base/errors.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { compileFilter } from '../match/matcher.js';

export type ArrayFilterMatchers = ReadonlyMap<string, (element: unknown) => boolean>;

const IDENTIFIER = /^[a-z][a-zA-Z0-9]*$/;
const CLAUSE_LISTS = new Set(['$and', '$or', '$nor']);

// Each filter names exactly one identifier through its top-level paths ({i: 0}, {'i.b': 1},
// {$or: [{i: 0}, {i: 1}]}); an element matches when {<identifier>: element} matches the filter.
export function parseArrayFilters(filters: readonly unknown[] | undefined, variables?: Record<string, unknown>): ArrayFilterMatchers {
  const out = new Map<string, (element: unknown) => boolean>();
  for (const filter of filters ?? []) {
    if (!isPlainObject(filter)) throw mongoError('FailedToParse', 'Error parsing array filter :: caused by :: array filters must be objects');
    const identifier = placeholderOf(filter);
    if (identifier === undefined) throw mongoError('FailedToParse', 'Cannot use an expression without a top-level field name in arrayFilters');
    if (out.has(identifier)) throw mongoError('FailedToParse', `Found multiple array filters with the same top-level field name ${identifier}`);
    const matcher = compileFilter(filter, { variables, javascript: false });
    out.set(identifier, (element) => matcher.matches({ [identifier]: element } as Doc));
  }
  return out;
}

function placeholderOf(filter: Doc): string | undefined {
  let found: string | undefined;
  const visit = (f: Doc) => {
    for (const [key, value] of Object.entries(f)) {
      if (CLAUSE_LISTS.has(key)) {
        if (Array.isArray(value)) for (const clause of value) if (isPlainObject(clause)) visit(clause);
        continue;
      }
      if (key.startsWith('$')) continue;
      const name = key.split('.')[0]!;
      if (found !== undefined && found !== name) {
        throw mongoError('FailedToParse', `Error parsing array filter :: caused by :: Expected a single top-level field name, found '${found}' and '${name}'`);
      }
      found = name;
    }
  };
  visit(filter);
  if (found !== undefined && !IDENTIFIER.test(found)) {
    throw mongoError('BadValue', `Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '${found}'`);
  }
  return found;
}
