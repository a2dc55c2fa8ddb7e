import { execFileSync } from 'node:child_process';

// Network partitions between loopback addresses with nftables (Debian's package; .ci/run installs
// it), each in a table of its own named after the test process: test files that run at the same
// time neither see nor heal each other's cuts. The test process itself talks to every member from
// 127.0.0.1, which no rule touches.
export class NftPartition {
  private readonly table: string;

  constructor(name: string) {
    this.table = `docshard_${name}_${process.pid}`;
  }

  // Drops what passes between `isolated` and each of `others`, both ways (replacing any cut).
  cut(isolated: string, others: readonly string[]): void {
    this.heal();
    const set = `{ ${others.join(', ')} }`;
    execFileSync('nft', ['-f', '-'], {
      input: `table inet ${this.table} {
        chain input {
          type filter hook input priority 0; policy accept;
          ip saddr ${isolated} ip daddr ${set} drop
          ip saddr ${set} ip daddr ${isolated} drop
        }
      }`,
    });
  }

  heal(): void {
    try {
      execFileSync('nft', ['delete', 'table', 'inet', this.table], { stdio: 'ignore' });
    } catch {
      // no table: nothing to heal
    }
  }
}

// The address part of `host:port`.
export function ipOf(host: string): string {
  return host.slice(0, host.lastIndexOf(':'));
}
