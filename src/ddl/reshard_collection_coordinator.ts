import type { Doc } from '../bson/values.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { drivePhase } from './ddl_phase_driver.js';
import { sendToConfig, START, type PhaseStep, type PhaseStepFn } from './ddl_phase_effects.js';
import { splitNs, type DDLCoordinatorEnv } from './sharding_ddl_util.js';

// MongoDB 7.0's ReshardCollectionCoordinator, on the database's primary shard: it holds the
// collection's DDL lock while the config server's ReshardingCoordinator (src/resharding) runs, so
// that no drop, rename, collMod or shardCollection of the collection interleaves with it.
//   kReshard  _configsvrReshardCollection, answered once the resharding has ended: its answer is
//             the request's (the only phase, so it may answer the resharding's refusal or abort);
//             sent again after a crash, it joins the resharding of the same key still running
const PHASES = ['kReshard'] as const;

export const reshardCollectionStep: PhaseStepFn = ({ doc, stage }): PhaseStep => {
  if (stage !== START) return { effects: [] };
  const { _shardsvrReshardCollection: _coll, ...options } = doc.request;
  return { effects: [sendToConfig({ _configsvrReshardCollection: doc._id.namespace, ...options })], next: 'answered' };
};

export function reshardCollectionCoordinator(env: DDLCoordinatorEnv): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const ns = doc._id.namespace;
    return {
      desc: 'ReshardCollectionCoordinator',
      plan: { phases: PHASES, preconditionPhase: 'kReshard' },
      locks: { db: splitNs(ns).db.toLowerCase(), collections: [ns] },
      runPhase: (phase, d, save) => drivePhase(env, reshardCollectionStep, phase, d, save, () => undefined),
      result: (): Doc => ({}),
    };
  };
}
