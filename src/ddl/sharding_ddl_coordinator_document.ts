import { Long, UUID } from 'bson';
import type { Doc } from '../bson/values.js';

// Where a shard keeps its DDL coordinators' state documents (MongoDB's
// NamespaceString::kShardingDDLCoordinatorsNamespace), one per coordinator in flight.
export const DDL_COORDINATORS_NS = 'config.system.sharding_ddl_coordinators';

// The operation types docshard's coordinators run, as MongoDB's DDLCoordinatorType names them.
export type DDLOperationType = 'collMod' | 'createCollection' | 'dropCollection' | 'dropDatabase' | 'movePrimary' | 'renameCollection' | 'refineCollectionShardKey' | 'reshardCollection';

export interface CoordinatorId {
  readonly namespace: string;
  readonly operationType: DDLOperationType;
}

// MongoDB's ShardingDDLCoordinatorMetadata and each coordinator's own fields: the request that
// started it, the databaseVersion the router attached, the session its participant commands run
// under (txnNumber bumped with each phase and at each recovery), and the phase persisted last.
export interface CoordinatorDocument {
  _id: CoordinatorId;
  phase: string;
  request: Doc;
  databaseVersion?: Doc;
  session: { lsid: { id: UUID }; txnNumber: Long };
  // What a phase learned that a later one needs (the collection's UUID, the shards), kept with the
  // phase so that a recovered coordinator acts on the same facts.
  [field: string]: unknown;
}

export function newCoordinatorDocument(id: CoordinatorId, request: Doc, databaseVersion: Doc | undefined): CoordinatorDocument {
  return {
    _id: id, phase: 'kUnset', request, ...(databaseVersion === undefined ? {} : { databaseVersion }),
    session: { lsid: { id: new UUID() }, txnNumber: Long.ZERO },
  };
}

// Each phase, and a coordinator after a restart, runs under the next txnNumber, so that a
// participant command sent before and still in flight is told apart from the new ones.
export function nextSession(doc: CoordinatorDocument): CoordinatorDocument['session'] {
  return { lsid: doc.session.lsid, txnNumber: Long.fromValue(doc.session.txnNumber).add(1) };
}
