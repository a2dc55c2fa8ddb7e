import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DRIVER_SPECS } from './driver_specs.js';

// The driver specifications' unified tests as the conformance tests run them: the runner
// (test/conformance/run_conformance.ts) in a process of its own, its totals and failures read from
// what it prints, and the failures each target is known to have, with why (docs/conformance.md).

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CRUD_DIR = 'crud/tests/unified';
export const SESSION_DIRS = ['sessions/tests', 'retryable-writes/tests/unified', 'causal-consistency/tests'];
export const TRANSACTION_DIRS = ['transactions/tests/unified', 'transactions-convenient-api/tests/unified'];
const run = promisify(execFile);

export interface Totals {
  passed: number;
  failed: number;
  skipped: number;
  output: string;
}

export async function conformance(args: string[]): Promise<Totals> {
  const result = await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/conformance/run_conformance.ts'), ...args], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 })
    .catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }));
  const last = result.stdout.trim().split('\n').pop() ?? '';
  const m = /^(\d+) passed, (\d+) failed, (\d+) skipped$/.exec(last);
  assert.ok(m, `runner summary line missing: ${last}\n${result.stderr}`);
  return { passed: Number(m[1]), failed: Number(m[2]), skipped: Number(m[3]), output: result.stdout };
}

// Each file's line and the name of each test that failed in it (reasons can name values a run
// made up, such as ObjectIds): the runner prints a failing test as `    <description>: <reason>`.
export function outcomes(totals: Totals): string[] {
  return totals.output.split('\n').flatMap((line) => {
    if (/^(PASS|FAIL) /.test(line)) return [line];
    const failing = /^ {4}(.*?): /.exec(line);
    return failing ? [`    ${failing[1]}`] : [];
  });
}

// Tests known to fail on a target, by file and description, each with why. Any other failure is
// a regression.
export interface KnownFailures {
  file: string;
  tests: readonly string[];
  why: string;
}

export const SHARD_ORDER = 'expects insertion order from a find or aggregate without sort; the router merges the shards in the order they answer, as MongoDB does on a sharded collection';

export const DDL_IN_TRANSACTION = 'DDL in a transaction is visible before its commit: a collection or index created in one is listed by listCollections or listIndexes from another client before commitTransaction';

export const NULL_IDS: KnownFailures = {
  file: 'crud/tests/unified/create-null-ids.json',
  tests: ['inserting _id with type null via insertOne', 'inserting _id with type null via insertMany', 'inserting _id with type null via bulkWrite'],
  why: 'the driver (7.9) replaces a null _id with an ObjectId before sending it: the server never sees _id: null (fails on one node too)',
};

// The CRUD tests known to fail through a router with every collection sharded on {_id: 'hashed'}.
export const ROUTER_CRUD_KNOWN_FAILURES: readonly KnownFailures[] = [
  NULL_IDS,
  { file: 'crud/tests/unified/aggregate.json', tests: ['aggregate with multiple batches works', 'aggregate with comment sets comment on getMore'], why: SHARD_ORDER },
  { file: 'crud/tests/unified/find-comment.json', tests: ['find with comment sets comment on getMore'], why: SHARD_ORDER },
  {
    file: 'crud/tests/unified/deleteOne-collation.json',
    tests: ['DeleteOne when many documents matches with collation'],
    why: 'a single-document delete without the shard key removes the first match a shard finds, which need not be the first in insertion order (as on MongoDB)',
  },
];

// The tests of the transactions and transactions-convenient-api suites known to fail through a
// router with every collection sharded.
export const TRANSACTION_SUITES_KNOWN_FAILURES: readonly KnownFailures[] = [
  { file: 'transactions/tests/unified/read-pref.json', tests: ['default readPreference', 'primary readPreference'], why: SHARD_ORDER },
  {
    file: 'transactions/tests/unified/create-collection.json',
    tests: ['explicitly create collection using create command', 'implicitly create collection using insert'],
    why: 'a collection created in a transaction through the router is listed by listCollections before the commit',
  },
  {
    file: 'transactions/tests/unified/create-index.json',
    tests: ['create index on a non-existing collection', 'create index on a collection created within the same transaction'],
    why: 'an index created in a transaction through the router is listed by listIndexes before the commit',
  },
  { file: 'transactions/tests/unified/reads.json', tests: ['collection readConcern without transaction', 'find', 'aggregate'], why: SHARD_ORDER },
  {
    file: 'transactions/tests/unified/read-concern.json',
    tests: ['only first find includes readConcern', 'only first aggregate includes readConcern', 'find ignores collection readConcern', 'aggregate ignores collection readConcern'],
    why: SHARD_ORDER,
  },
];

// The failing tests of a run that are not known failures: `    description` under each FAIL line.
export function unexpectedFailures(totals: Totals, known: readonly KnownFailures[]): string[] {
  const unexpected: string[] = [];
  let file = '';
  for (const line of outcomes(totals)) {
    const header = /^(?:PASS|FAIL) (\S+)/.exec(line);
    if (header) {
      file = path.relative(DRIVER_SPECS, header[1]!);
      continue;
    }
    const description = line.trim();
    if (!known.some((k) => k.file === file && k.tests.includes(description))) unexpected.push(`${file}: ${description}`);
  }
  return unexpected;
}

export function assertPassRate(totals: Totals, minimumRate: number): void {
  const { passed, failed } = totals;
  assert.ok(passed > 200, `only ${passed} tests passed`);
  assert.ok(passed / (passed + failed) >= minimumRate, `pass rate ${passed}/${passed + failed} is below ${minimumRate * 100}%:\n${totals.output}`);
}
