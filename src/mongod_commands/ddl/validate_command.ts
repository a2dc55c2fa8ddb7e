import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { validateCollection } from '../../storage/validate.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalBool } from '../../command_layer/args.js';

// validate reads the whole collection (storage/validate.ts) and answers in mongod's shape. It
// repairs nothing; `full` is accepted and changes nothing, since every check is already full.
export const validateCommand: CommandDefinition = {
  names: ['validate'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    optionalBool(cmd, 'full');
    const coll = ctx.node.storage.getCollection(ns);
    if (!coll) throw new MongoError(ErrorCodes.NamespaceNotFound, `Collection '${ns}' does not exist to validate.`);
    const report = validateCollection(ctx.node.storage, coll);
    const errors: string[] = [];
    if (report.corruptRecords.length > 0) errors.push(`Detected ${report.corruptRecords.length} corrupt records.`);
    if (report.missingIndexEntries.length > 0) errors.push(`Detected ${report.missingIndexEntries.length} missing index entries.`);
    if (report.extraIndexEntries.length > 0) errors.push(`Detected ${report.extraIndexEntries.length} extra index entries.`);
    const warnings: string[] = [];
    if (report.statsMismatch) {
      const { count, size } = report.statsMismatch;
      warnings.push(`The stored count and size (${count} documents, ${size} bytes) differ from the records read (${report.nrecords} documents, ${report.dataSize} bytes).`);
    }
    const problemIndexes = new Set([...report.missingIndexEntries, ...report.extraIndexEntries].map((p) => p.indexName));
    const indexDetails: Doc = {};
    for (const index of coll.indexes) indexDetails[index.name] = { valid: !problemIndexes.has(index.name) };
    return {
      ns,
      uuid: coll.entry.uuid,
      nInvalidDocuments: report.corruptRecords.length,
      nNonCompliantDocuments: 0,
      nrecords: report.nrecords,
      nIndexes: coll.indexes.length,
      keysPerIndex: report.keysPerIndex,
      indexDetails,
      valid: errors.length === 0,
      repaired: false,
      warnings,
      errors,
      extraIndexEntries: report.extraIndexEntries,
      missingIndexEntries: report.missingIndexEntries,
      corruptRecords: report.corruptRecords,
      ok: 1,
    };
  },
};
