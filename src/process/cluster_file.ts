import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';

// What a local cluster must remember between runs: the config server stores each shard as
// "127.0.0.1:PORT", so a restarted shard has to come back on the port it had.
// A cluster of replica sets (`up --replicas N`) keeps every member's port: `configPort` and each
// shard's `port` are then its first member's. A cluster of single processes has no `replicas`, as
// the files of docshards before sets have none.
export interface ClusterFile {
  configPort: number;
  shards: Array<{ name: string; port: number; members?: number[] }>;
  replicas?: number;
  configMembers?: number[];
}

const FILE_NAME = 'cluster.json';

export function readClusterFile(dir: string): ClusterFile | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(dir, FILE_NAME), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<ClusterFile>;
  const ports = (v: unknown): boolean => v === undefined || (Array.isArray(v) && v.every(isPort));
  if (!isPort(parsed.configPort) || !Array.isArray(parsed.shards) || !parsed.shards.every((s) => typeof s?.name === 'string' && isPort(s.port) && ports(s.members))
    || !ports(parsed.configMembers) || !(parsed.replicas === undefined || (Number.isInteger(parsed.replicas) && parsed.replicas > 0))) {
    throw new Error(`${path.join(dir, FILE_NAME)} is not a cluster file: ${text}`);
  }
  return {
    configPort: parsed.configPort, shards: parsed.shards,
    ...(parsed.replicas === undefined ? {} : { replicas: parsed.replicas }),
    ...(parsed.configMembers === undefined ? {} : { configMembers: parsed.configMembers }),
  };
}

// Written before the shards are added, and atomically (write, fsync, rename): a crash at any
// point leaves either the old file or the new one.
export function writeClusterFile(dir: string, file: ClusterFile): void {
  const target = path.join(dir, FILE_NAME);
  const temp = `${target}.tmp`;
  const fd = openSync(temp, 'w');
  try {
    writeSync(fd, `${JSON.stringify(file, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, target);
}

function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value < 65536;
}
