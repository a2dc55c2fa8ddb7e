// The order the runner starts the test files in, two at a time: each next file as a lane frees.
// A long file started late keeps one lane busy after the other has run out of files, so the
// longest go first, as a list scheduler's longest-first rule has it, told by where a file lives
// and how it is named (test/README.md): the `*_slow_test.ts` files (soaks, crash matrices, the
// conformance runs, minutes each), then the other integration tests (seconds to a minute and a
// half), then the unit tests (well under a second each), which fill the lanes' ends evenly.
// Within a tier the order is the one given.

function tier(file: string): number {
  if (file.endsWith('_slow_test.ts')) return 0;
  return file.split(/[\\/]/).includes('integration') ? 1 : 2;
}

export function runOrder(files: readonly string[]): string[] {
  return files.map((file, i) => ({ file, i })).sort((a, b) => tier(a.file) - tier(b.file) || a.i - b.i).map((e) => e.file);
}
