import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject } from '../../bson/values.js';
import { codeText, ScriptFunction } from '../js/js_function.js';
import { scriptSettings } from '../js/script_settings.js';
import type { MatchNode } from './match_node.js';

// $where: a JavaScript predicate run on each document in the process's script isolate
// (src/query/js), `this` and `obj` being the document. A node started with --noscripting refuses it
// where it parses the filter, as mongod does; a router passes it on to the shards whatever its
// --noscripting, as mongos does.
export function whereNode(value: unknown): MatchNode {
  const { enabled, local } = scriptSettings();
  if (local && !enabled) throw new MongoError(ErrorCodes.BadValue, 'no globalScriptEngine in $where parsing');
  const source = codeText(value);
  if (source === undefined) throw new MongoError(ErrorCodes.BadValue, '$where got bad type');
  const predicate = new ScriptFunction(source);
  return (input) => isPlainObject(input) && predicate.test(input);
}
