import { isPlainObject, type Doc } from '../../bson/values.js';

// The config.sampledQueries documents of a sampled command, as MongoDB records them:
// {_id: sampleId, ns, collectionUuid, cmdName, cmd, expireAt}. A read keeps its filter, collation
// and let; a write keeps its command with the one statement sampled (an update or delete batch is
// sampled statement by statement, as mongos samples them).

// queryAnalysisSampleExpirationSecs's default: a week.
const SAMPLE_EXPIRATION_MS = 7 * 24 * 3600 * 1000;

export const READ_COMMANDS: ReadonlySet<string> = new Set(['find', 'aggregate', 'count', 'distinct']);
export const WRITE_COMMANDS: ReadonlySet<string> = new Set(['update', 'delete', 'findAndModify']);

// The commands a router samples.
export function isSampledCommand(name: string): boolean {
  return READ_COMMANDS.has(name) || WRITE_COMMANDS.has(name);
}

// The `cmd` of each sample the command makes: one for a read or a findAndModify, one per
// statement for an update or a delete.
export function sampledCommands(name: string, cmd: Doc): Doc[] {
  const common: Doc = {};
  if (isPlainObject(cmd.let)) common.let = cmd.let;
  switch (name) {
    case 'find':
      return [{ filter: docOr(cmd.filter), collation: docOr(cmd.collation), ...common }];
    case 'aggregate':
      return [{ filter: leadingMatch(cmd.pipeline), collation: docOr(cmd.collation), ...common }];
    case 'count':
    case 'distinct':
      return [{ filter: docOr(cmd.query), collation: docOr(cmd.collation), ...common }];
    case 'update':
    case 'delete': {
      const field = name === 'update' ? 'updates' : 'deletes';
      const statements = Array.isArray(cmd[field]) ? (cmd[field] as unknown[]).filter(isPlainObject) : [];
      return statements.map((statement) => ({ [name]: cmd[name], [field]: [{ ...statement }], ...common }));
    }
    case 'findAndModify': {
      const out: Doc = { findAndModify: cmd.findAndModify };
      for (const field of ['query', 'update', 'remove', 'upsert', 'new', 'sort', 'collation', 'arrayFilters', 'let']) {
        if (cmd[field] !== undefined) out[field] = cmd[field];
      }
      return [out];
    }
    default:
      return [];
  }
}

// The sample's id on the statement the shard runs (an update statement's, a findAndModify's), so
// that the shard records the diff of what it changed (mongod_commands/crud/sampled_diff.ts).
export function attachSampleId(name: string, cmd: Doc, statement: number, sampleId: unknown): void {
  if (name === 'findAndModify') cmd.sampleId = sampleId;
  const updates = name === 'update' && Array.isArray(cmd.updates) ? (cmd.updates as unknown[]).filter(isPlainObject) : [];
  const target = updates[statement];
  if (target !== undefined) target.sampleId = sampleId;
}

export function sampledQueryDocument(sampleId: unknown, ns: string, collectionUuid: unknown, cmdName: string, cmd: Doc, now: number): Doc {
  return { _id: sampleId, ns, collectionUuid, cmdName, cmd, expireAt: new Date(now + SAMPLE_EXPIRATION_MS) };
}

function docOr(value: unknown): Doc {
  return isPlainObject(value) ? value : {};
}

// An aggregate's filter is its first stage's $match, as mongos samples it.
function leadingMatch(pipeline: unknown): Doc {
  const first = Array.isArray(pipeline) ? (pipeline[0] as unknown) : undefined;
  return isPlainObject(first) && isPlainObject(first.$match) ? first.$match : {};
}
