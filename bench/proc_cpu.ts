import { readdirSync, readFileSync } from 'node:fs';

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

// CPU seconds a process's live threads have run, from each /proc/<pid>/task/<tid>/schedstat (the
// scheduler's own nanoseconds): /proc/<pid>/stat counts whole 10 ms ticks, too coarse for an idle
// process's few ms a second. A thread that has exited no longer counts; NaN when the process is gone.
export function cpuSecondsExact(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // the thread exited between the listing and the read
      }
    }
    return ns / 1e9;
  } catch {
    return NaN;
  }
}
