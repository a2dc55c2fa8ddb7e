import assert from 'node:assert/strict';
import { MongoError } from '../../base/errors.js';
import type { Doc } from '../../bson/values.js';
import { compileUpdate, type UpdateContext, type UpdateOptions } from './update_driver.js';

export const NOW = new Date('2024-01-02T03:04:05.000Z');

export function run(doc: Doc, update: Doc | Doc[], options: UpdateOptions = {}, ctx: Partial<UpdateContext> = {}) {
  return compileUpdate(update, options).apply(doc, { isUpsertInsert: false, now: NOW, ...ctx });
}

export function assertMongoError(fn: () => unknown, code: number, message?: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof MongoError, `expected MongoError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (typeof message === 'string') assert.equal(err.message, message);
    else if (message) assert.match(err.message, message);
    return true;
  });
}
