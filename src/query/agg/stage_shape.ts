import { bsonTypeName } from '../../bson/compare.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { fail } from './operator_support.js';
import { applyProjection, exclusionOf, parseAddFields, parseProjection, type Projection } from './projection_tree.js';
import { compileDocExpression, type Stage, type StageParser } from './stage_support.js';

function projecting(projection: Projection): Stage {
  return function* (input, vars) {
    for (const doc of input) yield applyProjection(projection, doc, vars);
  };
}

export const parseProject: StageParser = (spec, env, name) => projecting(parseProjection(spec, env, name));

export const parseAddFieldsStage: StageParser = (spec, env, name) => projecting(parseAddFields(spec, env, name));

export const parseUnset: StageParser = (spec, _env, name) => {
  const paths = typeof spec === 'string' ? [spec] : spec;
  if (!Array.isArray(paths)) fail(31002, `${name} specification must be a string or an array`);
  if (paths.length === 0) fail(31119, `${name} specification must be a string or an array with at least one field`);
  if (!paths.every((p) => typeof p === 'string')) fail(31120, `${name} specification must be a string or an array containing only string values`);
  return projecting(exclusionOf(paths as string[], name));
};

function describeDoc(doc: Doc): string {
  return JSON.stringify(doc);
}

// $replaceRoot: {newRoot: <expr>} and its shorthand $replaceWith: <expr>.
export const parseReplaceRoot: StageParser = (spec, env, name) => {
  let expr: unknown = spec;
  if (name === '$replaceRoot') {
    if (!isPlainObject(spec)) fail(40228, `expected an object as specification for $replaceRoot stage, got ${bsonTypeName(spec)}`);
    for (const key of Object.keys(spec)) {
      if (key !== 'newRoot') fail(40415, `BSON field '$replaceRoot.${key}' is an unknown field.`);
    }
    if (!('newRoot' in spec)) fail(40414, "BSON field '$replaceRoot.newRoot' is missing but a required field");
    expr = spec.newRoot;
  }
  const evaluate = compileDocExpression(expr, env);
  return function* (input, vars) {
    for (const doc of input) {
      const root = evaluate(doc, vars);
      if (!isPlainObject(root)) {
        fail(40228, `'newRoot' expression must evaluate to an object, but resulting value was: ${root === undefined ? 'MISSING' : JSON.stringify(root)}. Type of resulting value: '${bsonTypeName(root)}'. Input document: ${describeDoc(doc)}`);
      }
      yield root;
    }
  };
};
