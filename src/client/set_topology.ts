import type { ObjectId } from 'bson';
import type { Doc } from '../bson/values.js';
import { describeHello, olderTopologyVersion, staleError, unknownServer, type ServerDescription, type TopologyVersion } from './server_description.js';

// Weight of a new round trip in the moving average (the SDAM spec's alpha).
const RTT_ALPHA = 0.2;

// One replica set as its monitor sees it, updated from its members' hello replies by the SDAM
// spec's rules for a set of known name: a reply of another set, a standalone or a router removes
// its server; the primary with the greatest (electionId, setVersion) wins and the one it deposes
// becomes Unknown; the primary's member lists are the set (new members added, others removed),
// and while no primary is known any member's lists add members; a reply or error older by
// topologyVersion than what a server's description shows changes nothing. Pure: no I/O, no clock.
export class SetTopology {
  private readonly servers = new Map<string, ServerDescription>();
  private maxSetVersion: number | undefined;
  private maxElectionId: ObjectId | undefined;

  constructor(readonly setName: string, seeds: readonly string[], nowMs: number) {
    for (const seed of seeds) this.servers.set(seed, unknownServer(seed, nowMs));
  }

  descriptions(): ServerDescription[] {
    return [...this.servers.values()];
  }

  addresses(): string[] {
    return [...this.servers.keys()];
  }

  server(address: string): ServerDescription | undefined {
    return this.servers.get(address);
  }

  primary(): ServerDescription | undefined {
    for (const s of this.servers.values()) if (s.type === 'RSPrimary') return s;
    return undefined;
  }

  // Seeds a later connection string names (a member added while none answered).
  addSeeds(hosts: readonly string[], nowMs: number): void {
    if (this.primary() !== undefined) return;
    for (const h of hosts) if (!this.servers.has(h)) this.servers.set(h, unknownServer(h, nowMs));
  }

  // A hello reply from `address`; `rttMs` when this check measured a round trip.
  onHello(address: string, reply: Doc, nowMs: number, rttMs?: number): void {
    const current = this.servers.get(address);
    if (current === undefined) return;
    const next = describeHello(address, reply, nowMs);
    if (olderTopologyVersion(next.topologyVersion, current.topologyVersion)) return;
    const rtt = rttMs === undefined ? current.rttMs : averageRtt(current.rttMs, rttMs);
    if (rtt !== undefined && next.type !== 'Unknown') next.rttMs = rtt;
    this.servers.set(address, next);
    switch (next.type) {
      case 'Standalone': case 'Mongos':
        this.servers.delete(address);
        return;
      case 'RSPrimary':
        this.fromPrimary(next, nowMs);
        return;
      case 'RSSecondary': case 'RSArbiter': case 'RSOther':
        this.fromMember(next, nowMs);
        return;
      default:
    }
  }

  // A round trip measured apart from the hello that describes the server (the streaming
  // protocol's replies come when something changed, so they time nothing).
  onRtt(address: string, rttMs: number): void {
    const current = this.servers.get(address);
    if (current === undefined || current.type === 'Unknown') return;
    current.rttMs = averageRtt(current.rttMs, rttMs);
  }

  // A check that got no reply: the server is Unknown until one comes.
  onCheckFailed(address: string, nowMs: number, error: string): void {
    const current = this.servers.get(address);
    if (current === undefined) return;
    this.servers.set(address, unknownServer(address, nowMs, current.topologyVersion, error));
  }

  // A command's not-primary error (stamped with the server's topologyVersion when it sent one):
  // Unknown at once, unless the description is already as new as the error. True when it changed.
  markNotPrimary(address: string, nowMs: number, topologyVersion?: TopologyVersion): boolean {
    const current = this.servers.get(address);
    if (current === undefined || current.type === 'Unknown') return false;
    if (staleError(topologyVersion, current.topologyVersion)) return false;
    this.servers.set(address, unknownServer(address, nowMs, topologyVersion ?? current.topologyVersion, 'not primary'));
    return true;
  }

  markUnreachable(address: string, nowMs: number, error: string): boolean {
    const current = this.servers.get(address);
    if (current === undefined || current.type === 'Unknown') return false;
    this.onCheckFailed(address, nowMs, error);
    return true;
  }

  private fromPrimary(desc: ServerDescription, nowMs: number): void {
    if (desc.setName !== this.setName) {
      this.servers.delete(desc.address);
      return;
    }
    if (this.olderThanSeen(desc)) {
      this.servers.set(desc.address, unknownServer(desc.address, nowMs, desc.topologyVersion, 'a newer primary is known'));
      return;
    }
    if (desc.electionId !== undefined) this.maxElectionId = desc.electionId;
    if (desc.setVersion !== undefined) this.maxSetVersion = desc.setVersion;
    for (const other of this.servers.values()) {
      if (other.address !== desc.address && other.type === 'RSPrimary') {
        this.servers.set(other.address, unknownServer(other.address, nowMs, other.topologyVersion, 'a newer primary was elected'));
      }
    }
    const members = new Set([...desc.hosts, ...desc.passives, ...desc.arbiters]);
    for (const m of members) if (!this.servers.has(m)) this.servers.set(m, unknownServer(m, nowMs));
    for (const address of [...this.servers.keys()]) if (!members.has(address)) this.servers.delete(address);
  }

  private fromMember(desc: ServerDescription, nowMs: number): void {
    if (desc.setName !== this.setName || (desc.me !== undefined && desc.me !== desc.address)) {
      this.servers.delete(desc.address);
      return;
    }
    if (this.primary() !== undefined) return;
    for (const m of [...desc.hosts, ...desc.passives, ...desc.arbiters]) if (!this.servers.has(m)) this.servers.set(m, unknownServer(m, nowMs));
  }

  // MongoDB 6.0's rule: electionId first, then setVersion; a primary below the greatest pair seen is stale.
  private olderThanSeen(desc: ServerDescription): boolean {
    if (this.maxElectionId === undefined || desc.electionId === undefined) return false;
    const byElection = Buffer.compare(Buffer.from(desc.electionId.id), Buffer.from(this.maxElectionId.id));
    if (byElection !== 0) return byElection < 0;
    return this.maxSetVersion !== undefined && desc.setVersion !== undefined && desc.setVersion < this.maxSetVersion;
  }
}

function averageRtt(previous: number | undefined, sample: number): number {
  return previous === undefined ? sample : RTT_ALPHA * sample + (1 - RTT_ALPHA) * previous;
}
