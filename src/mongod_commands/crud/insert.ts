import { MongoError } from '../../base/errors.js';
import { readPlainDocument } from '../../bson/raw_document.js';
import { deserializeDocument } from '../../bson/values.js';
import { decodedDocument, type StoredDocument } from '../../storage/op_observer.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalBool, requireArray } from '../../command_layer/args.js';
import { prepareInsert, prepareInsertBytes } from './document_validation.js';
import { originalBytes, sequenceBytes } from '../../command_layer/original_bytes.js';
import { checkBatchSize, withWriteErrors, writeError } from '../../command_layer/write_errors.js';
import { groupedWriteReply } from './write_concern.js';
import { validatorFor } from './document_validator.js';
import { retryableStatements, withRetriedStatements } from './retryable_write_run.js';

export const insertCommand: CommandDefinition = {
  names: ['insert'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const received = sequenceBytes(cmd, 'documents');
    const documents = received ?? requireArray(cmd, 'documents');
    const ordered = optionalBool(cmd, 'ordered') ?? true;
    checkBatchSize(documents.length);
    const prepare = received === undefined ? decodedStatements(documents) : receivedStatements(received);
    const { storage } = ctx.node;
    return groupedWriteReply(ctx, cmd, () => {
      const errors: Record<string, unknown>[] = [];
      let n = 0;
      // A key an open transaction wrote (an _id or a unique key it inserted) holds the insert until
      // the transaction ends, as MongoDB's insert waits out the write conflict: then it meets the
      // committed document (DuplicateKey) or nothing.
      const retryable = storage.writeWaitingForTransactions((unit) => {
        const coll = storage.getCollection(ns) ?? storage.ensureCollection(ns).coll;
        const validator = validatorFor(ctx, coll, cmd);
        const retry = retryableStatements(ctx, unit, cmd, ns, documents.length);
        for (let i = 0; i < documents.length; i++) {
          try {
            // A retried insert that ran is answered as done and not inserted again.
            if (retry?.run.executed(retry.stmtIds[i]!) !== undefined) {
              n += 1;
              continue;
            }
            const stored = prepare(i);
            validator?.check(stored.whole());
            unit.insertStored(coll, stored);
            n += 1;
            retry?.run.record(retry.stmtIds[i]!, { op: 'insert' }, { key: retry.keyOfStored(stored) });
          } catch (err) {
            if (!(err instanceof MongoError)) throw err;
            errors.push(writeError(i, err));
            if (ordered) break;
          }
        }
        retry?.run.finish();
        return retry;
      });
      ctx.node.counters.opcounters.insert += n;
      return withWriteErrors(withRetriedStatements({ n, ok: 1 }, retryable), errors);
    });
  },
};

// Statement i's document as stored; throws the statement's write error.
type Prepare = (i: number) => StoredDocument;

function decodedStatements(documents: unknown[]): Prepare {
  return (i) => {
    const { doc, bytes } = prepareInsert(documents[i], originalBytes(documents, i));
    return decodedDocument(doc, bytes);
  };
}

// Documents of a document sequence stay undecoded unless the fast reader declines them. Every one
// is read before anything is written, so invalid BSON fails the whole command (InvalidBSON from
// decoding), as it did when the message handler decoded them all.
function receivedStatements(received: Buffer[]): Prepare {
  const read = received.map((bytes) => readPlainDocument(bytes) ?? { bytes, decoded: deserializeDocument(bytes) });
  return (i) => {
    const item = read[i]!;
    if (!('decoded' in item)) return prepareInsertBytes(item);
    const { doc, bytes } = prepareInsert(item.decoded, item.bytes);
    return decodedDocument(doc, bytes);
  };
}
