import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The driver specifications' test data (unified CRUD, sessions, transactions, the BSON corpus) is
// read by path and never copied into the repository (its licence is not ours). A checkout beside
// this one's shared/ folder holds it; a clone on its own has none, so the tests that read it skip
// and say how to get it. CI sets DOCSHARD_SPECS_REQUIRED so that it never skips them.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SPECS_COMMIT = '92b3c0b9287bfba1b0ec4084300858d05c654f8c';

// DOCSHARD_SPECS names a checkout of github.com/mongodb/specifications (its source/ folder is
// read) or a folder laid out as that source/ folder, as ../shared/compat/specs is.
function specsDir(): string {
  const named = process.env.DOCSHARD_SPECS;
  if (named === undefined || named === '') return path.resolve(ROOT, '../shared/compat/specs');
  const source = path.resolve(named, 'source');
  return existsSync(source) ? source : path.resolve(named);
}

export const DRIVER_SPECS = specsDir();

// A test's `skip` option: false when the data is there, otherwise why it is skipped and how to
// point the tests at the data. Throws instead when DOCSHARD_SPECS_REQUIRED is set.
export function skipWithoutDriverSpecs(...folders: string[]): false | string {
  const missing = folders.map((f) => path.join(DRIVER_SPECS, f)).filter((dir) => !existsSync(dir));
  if (missing.length === 0) return false;
  const why = `no driver specification data at ${missing.join(', ')}: set DOCSHARD_SPECS to a checkout of `
    + `https://github.com/mongodb/specifications at commit ${SPECS_COMMIT} (git clone, then git checkout ${SPECS_COMMIT})`;
  if (process.env.DOCSHARD_SPECS_REQUIRED === '1') throw new Error(`${why}; DOCSHARD_SPECS_REQUIRED=1 forbids skipping`);
  return why;
}
