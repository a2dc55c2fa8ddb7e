import type { Doc, EntityDescription, Operation, TestCase, TestFile } from './test_file.js';

// What this runner does not do, found before a test starts so that it is skipped with a reason
// rather than failed: a skip says "not tested", a failure must mean "the server is wrong".

/** Thrown when a test turns out to need something unsupported only once it runs. */
export class Unsupported extends Error {
  constructor(what: string) {
    super(`unsupported: ${what}`);
  }
}

const SKIPPED_OPERATIONS: Record<string, string> = {
  clientBulkWrite: 'clientBulkWrite is not supported by this runner',
  getSnapshotTime: 'needs the snapshotTime session option, which the driver (7.9) does not have',
};

const SUPPORTED_ENTITIES = new Set(['client', 'database', 'collection', 'session']);
export const UNSUPPORTED_CLIENT_FIELDS = ['storeEventsAsEntities', 'observeLogMessages', 'observeTracingMessages', 'autoEncryptOpts', 'awaitMinPoolSizeMS'];

export function unsupportedFeature(file: TestFile, test: TestCase, knownOperations: ReadonlySet<string>): string | null {
  const entities = [...(file.createEntities ?? []), ...nestedEntities(test.operations)];
  for (const e of entities) {
    const reason = unsupportedEntity(e);
    if (reason) return reason;
  }
  for (const op of test.operations) {
    if (SKIPPED_OPERATIONS[op.name]) return `${SKIPPED_OPERATIONS[op.name]} (${op.name})`;
    if (!knownOperations.has(op.name)) return `unsupported operation ${op.name}`;
  }
  for (const expected of test.expectEvents ?? []) {
    if ((expected.eventType ?? 'command') !== 'command') return `${expected.eventType} event assertions`;
  }
  if (test.expectLogMessages) return 'log message assertions';
  if (test.expectTracingMessages) return 'tracing assertions';
  return null;
}

function nestedEntities(operations: Operation[]): EntityDescription[] {
  return operations.filter((op) => op.name === 'createEntities').flatMap((op) => (op.arguments?.entities ?? []) as EntityDescription[]);
}

function unsupportedEntity(description: EntityDescription): string | null {
  const [kind, spec] = Object.entries(description)[0];
  if (!SUPPORTED_ENTITIES.has(kind)) return `entity type ${kind}`;
  if (kind === 'client') {
    const field = UNSUPPORTED_CLIENT_FIELDS.find((f) => (spec as Doc)[f] !== undefined);
    if (field) return `client option ${field}`;
  }
  return null;
}
