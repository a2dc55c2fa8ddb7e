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

// Tests that check what the driver does, by file description and test description, where the driver
// (7.9) does something else whatever the server answers.
const DRIVER_LIMITS: Record<string, string> = {
  'replicaset-emit-topology-description-changed-before-close/Topology lifecycle':
    'the driver (7.9) emits no topologyDescriptionChangedEvent to Unknown before topologyClosedEvent when a client closes',
};

const SUPPORTED_ENTITIES = new Set(['client', 'database', 'collection', 'session', 'thread']);
const CLIENT_FIELD_REASONS: Record<string, string> = {
  observeLogMessages: 'client option observeLogMessages: this runner does not observe the driver\'s log messages',
};
export const UNSUPPORTED_CLIENT_FIELDS = ['storeEventsAsEntities', 'observeLogMessages', 'observeTracingMessages', 'autoEncryptOpts', 'awaitMinPoolSizeMS'];

export function unsupportedFeature(file: TestFile, test: TestCase, knownOperations: ReadonlySet<string>): string | null {
  const driverLimit = DRIVER_LIMITS[`${file.description}/${test.description}`];
  if (driverLimit) return driverLimit;
  const entities = [...(file.createEntities ?? []), ...nestedEntities(test.operations)];
  for (const e of entities) {
    const reason = unsupportedEntity(e);
    if (reason) return reason;
  }
  const onThreads = test.operations.filter((op) => op.name === 'runOnThread').map((op) => op.arguments?.operation as Operation);
  for (const op of [...test.operations, ...onThreads]) {
    if (SKIPPED_OPERATIONS[op.name]) return `${SKIPPED_OPERATIONS[op.name]} (${op.name})`;
    if (!knownOperations.has(op.name)) return `unsupported operation ${op.name}`;
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
    if (field) return CLIENT_FIELD_REASONS[field] ?? `client option ${field}`;
  }
  return null;
}
