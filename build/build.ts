// npm run build (and npm install, through `prepare`): bundles the sources into dist/, which
// bin/docshard.js runs while no source is newer.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleDocshard } from './bundle.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outfile = await bundleDocshard(ROOT, path.join(ROOT, 'dist'));
process.stdout.write(`built ${path.relative(ROOT, outfile)}\n`);
