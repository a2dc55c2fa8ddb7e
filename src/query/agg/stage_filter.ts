import { isPlainObject, type Doc } from '../../bson/values.js';
import { compileFilter } from '../match/matcher.js';
import { extractText } from '../exec/text_query.js';
import { fail } from './operator_support.js';
import { compileDocExpression, type DocEvaluator, type Stage, type StageParser } from './stage_support.js';

export const parseMatch: StageParser = (raw, env): Stage => {
  if (!isPlainObject(raw)) fail(15959, 'the match filter must be an expression in an object');
  // A $text $match is a pipeline's first stage (text_score.ts), answered by the collection read:
  // what reaches it here has passed the $text already.
  const spec = extractText(raw)?.rest ?? raw;
  const names = Object.fromEntries(env.varNames.map((n) => [n, null]));
  // Parsing once up front surfaces every error before any document is read; the filter is
  // compiled again per run because the matcher takes variable values at compile time.
  const parsed = compileFilter(spec, { variables: names, javascript: false });
  const noVariables = env.varNames.length === 0 && !JSON.stringify(spec).includes('$$');
  return (input, vars) => {
    const matcher = noVariables ? parsed : compileFilter(spec, { variables: vars, javascript: false });
    return filter(input, (doc) => matcher.matches(doc));
  };
};

function* filter(input: Iterable<Doc>, keep: (doc: Doc) => boolean): Iterable<Doc> {
  for (const doc of input) if (keep(doc)) yield doc;
}

// $redact walks the document top-down: $$DESCEND keeps the level and visits its subdocuments
// (also inside arrays), $$PRUNE drops it, $$KEEP keeps it whole.
export const parseRedact: StageParser = (spec, env): Stage => {
  const evaluate = compileDocExpression(spec, env);
  return function* (input, vars) {
    const scope = { ...vars, DESCEND: 'descend', PRUNE: 'prune', KEEP: 'keep' };
    for (const doc of input) {
      const out = redact(doc, doc, scope, evaluate);
      if (out !== undefined) yield out;
    }
  };
};

function redact(level: Doc, root: Doc, vars: Record<string, unknown>, evaluate: DocEvaluator): Doc | undefined {
  // The expression sees the current level as $$CURRENT but the original document as $$ROOT.
  const decision = evaluate(level, vars, root);
  if (decision === 'prune') return undefined;
  if (decision === 'keep') return level;
  if (decision !== 'descend') fail(17053, `$redact's expression should not return anything aside from the variables $$KEEP, $$DESCEND, and $$PRUNE, but returned ${JSON.stringify(decision)}`);
  const out: Doc = {};
  for (const key of Object.keys(level)) {
    const v = level[key];
    if (isPlainObject(v)) {
      const r = redact(v, root, vars, evaluate);
      if (r !== undefined) out[key] = r;
    } else if (Array.isArray(v)) {
      out[key] = redactArray(v, root, vars, evaluate);
    } else {
      out[key] = v;
    }
  }
  return out;
}

function redactArray(array: unknown[], root: Doc, vars: Record<string, unknown>, evaluate: DocEvaluator): unknown[] {
  const out: unknown[] = [];
  for (const v of array) {
    if (isPlainObject(v)) {
      const r = redact(v, root, vars, evaluate);
      if (r !== undefined) out.push(r);
    } else if (Array.isArray(v)) {
      out.push(redactArray(v, root, vars, evaluate));
    } else {
      out.push(v);
    }
  }
  return out;
}
