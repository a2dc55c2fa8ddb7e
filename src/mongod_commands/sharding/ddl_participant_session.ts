import { isNumber, toDouble, type Doc } from '../../bson/values.js';
import { LocalWriter } from '../../query/exec/local_collection.js';
import { sessionIdOf } from '../../sessions/session_id.js';
import type { CommandContext } from '../command.js';

// Where MongoDB's DDL participants write their no-op (NamespaceString::kServerConfigurationNamespace).
const NOOP_NS = 'admin.system.version';

// A DDL coordinator sends its participant and config server commands as retryable writes of its
// session (lsid, txnNumber from its state document; the txnNumber goes up each time it recovers).
// As MongoDB's participants do, the command writes a no-op under that session (a count in
// admin.system.version), so that the session's txnNumber is durable with the record of the write:
// a command of an older txnNumber, one the coordinator sent before it crashed and still in flight,
// is refused with TransactionTooOld, here or after this node restarts. The no-op comes first, so
// that such a command is refused before it does anything. Run again under the same txnNumber (the
// coordinator retrying a phase), the no-op's statement has run and is not written twice.
export function checkDDLCoordinatorSession(ctx: CommandContext, cmd: Doc, command: string): void {
  if (cmd.lsid === undefined || !isNumber(cmd.txnNumber)) return;
  const txnNumber = toDouble(cmd.txnNumber);
  const { storage, sessionCatalog } = ctx.node;
  storage.write((unit) => {
    const run = sessionCatalog.begin(unit, sessionIdOf(cmd.lsid), txnNumber, NOOP_NS);
    if (run.executed(0) !== undefined) return;
    new LocalWriter(storage, unit).update(NOOP_NS, { _id: command }, { $inc: { count: 1 } }, { upsert: true });
    run.record(0, { op: 'update', n: 1, nModified: 1 });
    run.finish();
  });
}
