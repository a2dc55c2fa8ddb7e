import type { CommandMetrics } from './command_metrics.js';

// What a process tells its metrics, read when someone scrapes: narrow views the composition root
// (src/process) builds from a node's or a router's services, so this folder knows none of them.

export type Role = 'shard' | 'config' | 'router';

export interface ProcessSources {
  role: Role;
  version: string;
  commands: CommandMetrics;
  connections(): { current: number; created: number };
  cursorsOpen(): number;
  // Nodes: the bytes of their data files.
  storageSizeBytes?(): number;
  shard?(): ShardFigures;
  config?(): ConfigFigures;
  router?(): RouterFigures;
  // Replica-set members (--replSet) once their set is initiated.
  replication?(): ReplicationFigures | undefined;
}

export interface CollectionFigures {
  ns: string;
  // Every document the shard stores, orphans included (collStats's count and size).
  documents: number;
  bytes: number;
  orphanedDocuments: number;
  orphanedBytes: number;
}

export interface ShardFigures {
  // Its name in the cluster; empty before it is added.
  shard: string;
  collections: CollectionFigures[];
  migrations: {
    donorStarted: number;
    donorCommitted: number;
    donorAborted: number;
    recipientStarted: number;
    clonedDocuments: number;
    clonedBytes: number;
  };
  rangeDeletionTasks: { pending: number; ready: number };
}

export interface ConfigFigures {
  chunks: Array<{ ns: string; shard: string; count: number }>;
  shards: Array<{ name: string; draining: boolean }>;
  balancer: { enabled: boolean; roundRunning: boolean; rounds: number };
}

export interface RouterFigures {
  catalogCacheRefreshes: { incremental: number; full: number };
  staleConfigRetries: number;
  fastPaths: { insert: number; update: number; find: number };
  // Every member of the replica sets the router reaches, as its ReplicaSetMonitors see them.
  monitoredMembers: Array<{ set: string; host: string; role: 'primary' | 'secondary' | 'other' | 'unknown'; rttSeconds: number }>;
}

// A replica-set member's view of its set (replSetGetStatus's, read in place).
export interface ReplicationFigures {
  set: string;
  term: number;
  // Elections this member won since the process started.
  electionsWon: number;
  // From the oldest entry in its oplog to the newest: how long a member may be away and still
  // catch up from it without a new initial sync.
  oplogWindowSeconds: number;
  // Every member as this one last heard of it; `lagSeconds` behind the primary's last applied
  // entry, undefined while no primary is known.
  members: Array<{ host: string; state: string; lagSeconds: number | undefined }>;
}
