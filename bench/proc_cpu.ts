import { readFileSync } from 'node:fs';

// CPU seconds (user + system) a process has used, from /proc (Linux); NaN elsewhere or when the
// process is gone. Benchmarks read it around a measurement to report CPU per operation, which
// holds steadier than throughput on a shared machine.
export function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  if (pid === process.pid) {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return NaN;
  }
}
