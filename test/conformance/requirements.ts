import type { Doc, RunOnRequirement } from './test_file.js';
import { matchValue } from './unified_matcher.js';

// runOnRequirements and schemaVersion: may this runner run a file or test on this server?

export const SCHEMA_VERSION_SUPPORTED = '1.21';

export type Topology = 'single' | 'replicaset' | 'sharded';

export interface ServerInfo {
  version: number[];
  topology: Topology;
  /** A server parameter's value, or undefined when the server will not say. */
  parameter(name: string): Promise<unknown>;
}

export function parseVersion(text: string): number[] {
  const parts = text.split('-')[0].split('.').map((p) => Number.parseInt(p, 10));
  return [0, 1, 2].map((i) => (Number.isFinite(parts[i]) ? parts[i] : 0));
}

export function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  }
  return 0;
}

/** Files of the same major version and a minor no newer than ours are ones we understand. */
export function schemaVersionProblem(version: string): string | null {
  const [major, minor] = parseVersion(version);
  const [ourMajor, ourMinor] = parseVersion(SCHEMA_VERSION_SUPPORTED);
  if (major === ourMajor && minor <= ourMinor) return null;
  return `schemaVersion ${version} is not supported (runner supports ${SCHEMA_VERSION_SUPPORTED})`;
}

/** null when some requirement holds (or there are none); else why none does. */
export async function unmetRequirements(reqs: RunOnRequirement[] | undefined, server: ServerInfo): Promise<string | null> {
  if (!reqs || reqs.length === 0) return null;
  const reasons: string[] = [];
  for (const req of reqs) {
    const reason = await unmet(req, server);
    if (reason === null) return null;
    reasons.push(reason);
  }
  return `runOnRequirements not met: ${reasons.join('; ')}`;
}

async function unmet(req: RunOnRequirement, server: ServerInfo): Promise<string | null> {
  if (req.minServerVersion && compareVersions(server.version, parseVersion(req.minServerVersion)) < 0) {
    return `needs server >= ${req.minServerVersion}`;
  }
  if (req.maxServerVersion && compareVersions(server.version, parseVersion(req.maxServerVersion)) > 0) {
    return `needs server <= ${req.maxServerVersion}`;
  }
  if (req.topologies && !req.topologies.some((t) => topologySatisfies(t, server.topology))) {
    return `needs topology ${req.topologies.join('|')} (have ${server.topology})`;
  }
  if (req.serverless === 'require') return 'needs serverless';
  if (req.auth === true) return 'needs auth';
  if (req.authMechanism) return `needs auth mechanism ${req.authMechanism}`;
  if (req.csfle !== undefined && req.csfle !== false) return 'needs client-side encryption';
  if (req.serverParameters) return serverParametersUnmet(req.serverParameters, server);
  return null;
}

/** The runner does not ask whether a cluster's shards are sets, so "sharded-replicaset" never holds (no suite run through routers asks for it). */
function topologySatisfies(wanted: string, have: Topology): boolean {
  return wanted === have;
}

async function serverParametersUnmet(params: Doc, server: ServerInfo): Promise<string | null> {
  for (const [name, wanted] of Object.entries(params)) {
    const have = await server.parameter(name);
    if (have === undefined) return `server parameter ${name} unknown`;
    if (matchValue(wanted, have, false) !== null) return `needs server parameter ${name}=${String(wanted)}`;
  }
  return null;
}
