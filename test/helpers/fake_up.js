#!/usr/bin/env node
// `docshard up` whose children are the stand-in roles of fake_docshard.js.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register();
const { runUp } = await import('../../src/process/up_command.ts');
await runUp(process.argv.slice(2), path.join(path.dirname(fileURLToPath(import.meta.url)), 'fake_docshard.js'));
