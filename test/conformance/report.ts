import type { FileReport, TestReport } from './unified_runner.js';

// The runner's output: one line per file, one indented line per failing test, and the totals
// alone on the last line.

const REASON_CHARS_MAX = 240;

export interface Totals {
  passed: number;
  failed: number;
  skipped: number;
}

export function countTests(tests: TestReport[]): Totals {
  const count = (status: TestReport['status']) => tests.filter((t) => t.status === status).length;
  return { passed: count('passed'), failed: count('failed'), skipped: count('skipped') };
}

export function formatFile(report: FileReport, verbose: boolean): string[] {
  const t = countTests(report.tests);
  const lines = t.failed > 0
    ? [`FAIL ${report.path} (${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped)`]
    : [`PASS ${report.path} (${t.passed} passed, ${t.skipped} skipped)`];
  for (const test of report.tests) {
    if (test.status === 'failed') lines.push(`    ${test.description}: ${reasonText(test.reason, verbose)}`);
    else if (test.status === 'skipped' && verbose) lines.push(`    skipped ${test.description}: ${reasonText(test.reason, true)}`);
  }
  return lines;
}

export function formatTotals(t: Totals): string {
  return `${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`;
}

function reasonText(reason: string | undefined, full: boolean): string {
  const text = reason ?? 'no reason given';
  if (full) return text;
  const line = text.replace(/\s+/g, ' ');
  return line.length > REASON_CHARS_MAX ? `${line.slice(0, REASON_CHARS_MAX)}...` : line;
}
