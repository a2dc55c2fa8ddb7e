import { readFile } from 'node:fs/promises';
import { EJSON } from 'bson';

// The shape of a unified-format test file (schema-1.21.json), as far as this runner reads it.

export type Doc = Record<string, unknown>;

export interface RunOnRequirement {
  minServerVersion?: string;
  maxServerVersion?: string;
  topologies?: string[];
  serverless?: 'require' | 'forbid' | 'allow';
  serverParameters?: Doc;
  auth?: boolean;
  authMechanism?: string;
  csfle?: boolean | Doc;
}

/** Exactly one key, the entity type, mapping to its definition. */
export type EntityDescription = Record<string, Doc & { id: string }>;

export interface CollectionData {
  collectionName: string;
  databaseName: string;
  createOptions?: Doc;
  documents: Doc[];
}

export interface ExpectedError {
  isError?: boolean;
  isClientError?: boolean;
  isTimeoutError?: boolean;
  errorContains?: string;
  errorCode?: unknown;
  errorCodeName?: string;
  errorLabelsContain?: string[];
  errorLabelsOmit?: string[];
  writeErrors?: Doc;
  writeConcernErrors?: Doc[];
  errorResponse?: Doc;
  expectResult?: unknown;
}

export interface Operation {
  name: string;
  object: string;
  arguments?: Doc;
  ignoreResultAndError?: boolean;
  expectError?: ExpectedError;
  expectResult?: unknown;
  saveResultAsEntity?: string;
}

export interface ExpectedEventsForClient {
  client: string;
  eventType?: 'command' | 'cmap' | 'sdam';
  events: Doc[];
  ignoreExtraEvents?: boolean;
}

export interface TestCase {
  description: string;
  runOnRequirements?: RunOnRequirement[];
  skipReason?: string;
  operations: Operation[];
  expectEvents?: ExpectedEventsForClient[];
  expectLogMessages?: unknown[];
  expectTracingMessages?: unknown;
  outcome?: CollectionData[];
}

export interface TestFile {
  description: string;
  schemaVersion: string;
  runOnRequirements?: RunOnRequirement[];
  createEntities?: EntityDescription[];
  initialData?: CollectionData[];
  tests: TestCase[];
}

/**
 * Canonical parsing keeps every number's BSON type (1 is an int32, 1.0 a double,
 * $numberLong an int64), so the documents a test inserts are the ones it means.
 */
export async function loadTestFile(path: string): Promise<TestFile> {
  const text = await readFile(path, 'utf8');
  const file = EJSON.parse(text, { relaxed: false }) as unknown as TestFile;
  if (typeof file.schemaVersion !== 'string' || !Array.isArray(file.tests)) {
    throw new Error('not a unified-format test file (no schemaVersion or tests)');
  }
  return file;
}
