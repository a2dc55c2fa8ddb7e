import { bsonTypeName } from '../../bson/compare.js';
import { isPlainObject } from '../../bson/values.js';
import { codeText, ScriptFunction } from '../js/js_function.js';
import { checkScriptingEnabled } from '../js/script_settings.js';
import { constantOf } from './constant.js';
import { fail, type OperatorTable } from './operator_support.js';

// $function: a JavaScript function of the expression's arguments, run in the process's script
// isolate (src/query/js) with MongoDB 7.0's checks of its specification. A process with scripting
// off refuses it when it would run it, as mongod does.
export const scriptOperators: OperatorTable = {
  $function: (args, parser) => {
    if (!isPlainObject(args)) fail(31260, `$function requires an object as an argument, found: ${bsonTypeName(args)}`);
    if (!('body' in args)) fail(31261, 'The body function must be specified.');
    const body = constantOf(args.body);
    if (body === undefined) fail(31432, 'The body function must be a constant expression');
    const source = codeText(body.value);
    if (source === undefined) fail(31262, 'The body function must evaluate to type string or code');
    if (!('args' in args)) fail(31263, 'The args field must be specified.');
    const evaluateArgs = parser.parse(args.args);
    if (!('lang' in args)) fail(31418, 'The lang field must be specified.');
    if (args.lang !== 'js') fail(31419, "Currently the only supported language specifier is 'js'.");
    const fn = new ScriptFunction(source);
    return (ctx) => {
      checkScriptingEnabled();
      const values = evaluateArgs(ctx);
      if (!Array.isArray(values)) fail(31266, 'The args field must be of type array');
      return fn.apply({}, values);
    };
  },
};
