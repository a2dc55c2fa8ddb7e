import type { MongoClient } from 'mongodb';
import { checkOutcome, setUpCollections } from './collection_data.js';
import { createEntity, EntityMap, type Entity } from './entities.js';
import { checkError } from './expected_error.js';
import { checkEvents } from './expected_events.js';
import { TestFailPoints } from './fail_point_operations.js';
import { afterOperation, beforeOperation } from './implicit_sharding.js';
import { describe, matchDocuments, matchValue, show } from './unified_matcher.js';
import { ENTITY_OPERATION_NAMES, entityOperation, type OperationResult } from './operations.js';
import { schemaVersionProblem, unmetRequirements, type ServerInfo } from './requirements.js';
import { loadTestFile, type Doc, type Operation, type TestCase, type TestFile } from './test_file.js';
import { SPECIAL_OPERATION_NAMES, specialOperation, type RunnerContext } from './test_runner_operations.js';
import { Unsupported, unsupportedFeature } from './unsupported.js';

// The test loop: for each test, set up its collections, build its entities, run its operations
// with their assertions, then compare the events and the final collection contents.

export interface RunnerOptions {
  uri: string;
  shardCollections: boolean;
  /** Only tests whose description contains this are run (others are not counted at all). */
  filter?: string;
}

export type TestStatus = 'passed' | 'failed' | 'skipped';

export interface TestReport {
  description: string;
  status: TestStatus;
  reason?: string;
}

export interface FileReport {
  path: string;
  tests: TestReport[];
}

/** A failed assertion: a reason for the report, not a crash of the runner. */
class AssertionFailure extends Error {}

const TEST_TIMEOUT_MS = 60_000;
const SERVER_SELECTION_TIMEOUT_MS = 10_000;

const KNOWN_OPERATIONS: ReadonlySet<string> = new Set([
  ...SPECIAL_OPERATION_NAMES,
  ...[...ENTITY_OPERATION_NAMES.values()].flatMap((names) => [...names]),
]);

export class UnifiedRunner {
  constructor(
    private readonly internal: MongoClient,
    private readonly server: ServerInfo,
    private readonly options: RunnerOptions,
  ) {}

  async runFile(path: string): Promise<FileReport> {
    let file: TestFile;
    try {
      file = await loadTestFile(path);
    } catch (err) {
      return { path, tests: [{ description: '(file)', status: 'failed', reason: `cannot load: ${(err as Error).message}` }] };
    }
    const tests = file.tests.filter((t) => !this.options.filter || t.description.includes(this.options.filter));
    const schemaProblem = schemaVersionProblem(file.schemaVersion);
    if (schemaProblem) return { path, tests: tests.map((t) => ({ description: t.description, status: 'failed', reason: schemaProblem })) };
    const fileUnmet = tests.length > 0 ? await unmetRequirements(file.runOnRequirements, this.server) : null;
    const reports: TestReport[] = [];
    for (const test of tests) {
      const skip = fileUnmet ?? (await this.skipReason(file, test));
      reports.push(skip ? { description: test.description, status: 'skipped', reason: skip } : await this.runTest(file, test));
    }
    return { path, tests: reports };
  }

  private async skipReason(file: TestFile, test: TestCase): Promise<string | null> {
    if (test.skipReason) return `skipReason: ${test.skipReason}`;
    return (await unmetRequirements(test.runOnRequirements, this.server)) ?? unsupportedFeature(file, test, KNOWN_OPERATIONS);
  }

  private async runTest(file: TestFile, test: TestCase): Promise<TestReport> {
    const entities = new EntityMap();
    const failPoints = new TestFailPoints(this.internal);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AssertionFailure(`timed out after ${TEST_TIMEOUT_MS} ms`)), TEST_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.runSteps(file, test, entities, failPoints), timeout]);
      // A fail point left on would fail the next test's commands: this one fails instead.
      await step('disabling fail points', () => failPoints.disableAll());
      return { description: test.description, status: 'passed' };
    } catch (err) {
      if (err instanceof Unsupported) return { description: test.description, status: 'skipped', reason: err.message };
      const reason = err instanceof AssertionFailure ? err.message : `unexpected error: ${errorText(err)}`;
      return { description: test.description, status: 'failed', reason };
    } finally {
      clearTimeout(timer);
      await failPoints.disableAll().catch(() => undefined);
      await entities.close();
    }
  }

  private async runSteps(file: TestFile, test: TestCase, entities: EntityMap, failPoints: TestFailPoints): Promise<void> {
    await step('initialData', () => setUpCollections(this.internal, file.initialData ?? [], this.options.shardCollections));
    const env = { uri: this.options.uri, serverSelectionTimeoutMs: SERVER_SELECTION_TIMEOUT_MS };
    const ctx: RunnerContext = {
      entities,
      internal: this.internal,
      failPoints,
      createEntity: (d) => createEntity(d, entities, env),
      runOperation: (op) => this.runOperation(op, ctx),
    };
    for (const description of file.createEntities ?? []) await ctx.createEntity(description);
    for (const [i, op] of test.operations.entries()) {
      await step(`operation ${i} (${op.name} on ${op.object})`, () => this.runOperation(op, ctx));
    }
    entities.stopRecording();
    for (const expected of test.expectEvents ?? []) {
      const client = entities.get(expected.client, 'client');
      const problem = checkEvents(expected, client, entities.matchContext());
      if (problem) throw new AssertionFailure(`events of ${expected.client}: ${problem}`);
    }
    const outcome = await step('outcome', () => checkOutcome(this.internal, test.outcome ?? []));
    if (outcome) throw new AssertionFailure(outcome);
  }

  /**
   * In a withTransaction callback (`inCallback`), an operation's error, once found as expected
   * or ignored, is thrown on: the callback fails with it and the driver aborts, retries or gives
   * up as that error says, which is what the tests check.
   */
  private async runOperation(op: Operation, ctx: RunnerContext, inCallback = false): Promise<void> {
    if (op.object === 'testRunner') {
      const special = specialOperation(op.name);
      if (!special) throw new Unsupported(`special operation ${op.name}`);
      return special(op.arguments ?? {}, ctx);
    }
    const target = ctx.entities.find(op.object);
    if (!target) throw new Error(`no entity named ${op.object}`);
    const runCallback = async (operations: Operation[]) => {
      for (const [i, nested] of operations.entries()) {
        try {
          await this.runOperation(nested, ctx, true);
        } catch (err) {
          if (err instanceof AssertionFailure) throw new AssertionFailure(`callback operation ${i} (${nested.name} on ${nested.object}): ${err.message}`);
          throw err;
        }
      }
    };
    const run = entityOperation(op.name, target, runCallback);
    if (!run) throw new Unsupported(`operation ${op.name} on a ${target.kind}`);
    const args = resolveSession(op.arguments ?? {}, ctx.entities);

    const shard = this.options.shardCollections;
    if (shard) await beforeOperation(ctx.internal, op.name, target, args);
    let result: OperationResult | undefined;
    let error: unknown;
    try {
      result = await run(args);
    } catch (err) {
      error = err;
    }
    // A callback's failed assertion or unsupported step comes out of withTransaction as its error.
    if (error instanceof AssertionFailure || error instanceof Unsupported) throw error;
    if (shard && result) await afterOperation(ctx.internal, op.name, target, args);
    const passOn = () => {
      if (inCallback && !result) throw error;
    };
    if (op.ignoreResultAndError) return passOn();
    const matchContext = ctx.entities.matchContext();
    if (op.expectError) {
      if (result) throw new AssertionFailure(`expected an error, got result ${show(result.value)}`);
      const problem = checkError(op.expectError, error, matchContext);
      if (problem) throw new AssertionFailure(problem);
      return passOn();
    }
    if (!result) throw new AssertionFailure(`unexpected error: ${errorText(error)}`);
    if (op.expectResult !== undefined) {
      const m = result.documents && Array.isArray(op.expectResult)
        ? matchDocuments(op.expectResult, result.value, matchContext)
        : matchValue(op.expectResult, result.value, true, matchContext);
      if (m) throw new AssertionFailure(`result ${describe(m)}`);
    }
    if (op.saveResultAsEntity) ctx.entities.set(op.saveResultAsEntity, savedEntity(result));
  }
}

/** Names the step an unexpected error came from; assertion failures get the same prefix. */
async function step<T>(name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof Unsupported) throw err;
    if (err instanceof AssertionFailure) throw new AssertionFailure(`${name}: ${err.message}`);
    throw new AssertionFailure(`${name}: unexpected error: ${errorText(err)}`);
  }
}

function resolveSession(args: Doc, entities: EntityMap): Doc {
  if (typeof args.session !== 'string') return args;
  return { ...args, session: entities.get(args.session, 'session').session };
}

function savedEntity(result: OperationResult): Entity {
  if (result.entity) return result.entity;
  if (result.value === undefined) throw new Error('saveResultAsEntity: the operation returned nothing');
  return { kind: 'value', value: result.value };
}

function errorText(err: unknown): string {
  if (!(err instanceof Error)) return show(err);
  const code = (err as { code?: unknown }).code;
  return `${err.name}${code !== undefined ? ` (code ${String(code)})` : ''}: ${err.message}`;
}
