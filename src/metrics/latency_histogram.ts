// Latency buckets shared by every histogram docshard exposes and by the console's quantiles: upper
// bounds in seconds (Prometheus's `le`), from half a millisecond, where a point read through a router
// lands, to ten seconds, past which an operation is only "slow". The last bucket, beyond them all, is
// +Inf.
export const LATENCY_BOUNDS_SECONDS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

// The bucket a duration falls in: the first bound at or above it, or the +Inf bucket.
export function bucketIndex(seconds: number): number {
  const bounds = LATENCY_BOUNDS_SECONDS;
  let i = 0;
  while (i < bounds.length && seconds > bounds[i]!) i++;
  return i;
}

// The q-quantile of a histogram given as per-bucket (not cumulative) counts, interpolated inside
// its bucket as Prometheus's histogram_quantile does; an observation in the +Inf bucket answers the
// highest bound. Undefined when there is no observation.
export function quantileSeconds(counts: readonly number[], q: number): number | undefined {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return undefined;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const count = counts[i]!;
    if (count > 0 && seen + count >= rank) {
      if (i >= LATENCY_BOUNDS_SECONDS.length) return LATENCY_BOUNDS_SECONDS[LATENCY_BOUNDS_SECONDS.length - 1]!;
      const lower = i === 0 ? 0 : LATENCY_BOUNDS_SECONDS[i - 1]!;
      return lower + (LATENCY_BOUNDS_SECONDS[i]! - lower) * ((rank - seen) / count);
    }
    seen += count;
  }
  return LATENCY_BOUNDS_SECONDS[LATENCY_BOUNDS_SECONDS.length - 1]!;
}

// Per-bucket counts added since `before` (both cumulative over time, as a process keeps them).
export function bucketDelta(now: readonly number[], before: readonly number[] | undefined): number[] {
  return now.map((n, i) => Math.max(0, n - (before?.[i] ?? 0)));
}
