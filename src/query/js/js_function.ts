import { bsonTag, type Doc } from '../../bson/values.js';
import { fromScriptText, sharedContext, toScriptText, type ScriptContext } from './js_engine.js';

// Code as MongoDB takes it: a string, or BSON's JavaScript code type (what a driver sends for a
// function). Undefined for anything else, which the caller refuses with its own error.
export function codeText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (bsonTag(value) === 'Code') return (value as { code: string }).code;
  return undefined;
}

// A script function, compiled into the shared context at its first call (so a syntax error fails
// the first evaluation, as MongoDB reports it) and again whenever the isolate was replaced.
export class ScriptFunction {
  constructor(readonly source: string, private readonly context: () => ScriptContext = sharedContext) {}

  private id(ctx: ScriptContext): number {
    return ctx.compile(this.source);
  }

  // `fn.apply(thisValue, args)`, values crossing as the shell's types.
  apply(thisValue: unknown, args: readonly unknown[]): unknown {
    const ctx = this.context();
    const text = ctx.call<string>('__call', [this.id(ctx), toScriptText(thisValue ?? {}), toScriptText(args)]);
    return fromScriptText(text);
  }

  // $where's call: the document as `this` and `obj`, the result taken as a boolean.
  test(doc: Doc): boolean {
    const ctx = this.context();
    return ctx.call<boolean>('__where', [this.id(ctx), toScriptText(doc)]);
  }

  // mapReduce's map over documents: the [key, value] pairs they emitted, in order.
  map(docs: readonly Doc[]): { k: unknown; v: unknown }[] {
    const ctx = this.context();
    return fromScriptText(ctx.call<string>('__map', [this.id(ctx), toScriptText(docs)])) as { k: unknown; v: unknown }[];
  }

  // $accumulator's accumulate: `state` folded with each of `inputs` (each the arguments after the
  // state), in one call.
  accumulate(state: unknown, inputs: readonly unknown[][]): unknown {
    const ctx = this.context();
    return fromScriptText(ctx.call<string>('__accumulate', [this.id(ctx), toScriptText(state), toScriptText(inputs)]));
  }
}
