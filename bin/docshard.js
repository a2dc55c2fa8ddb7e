#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npm install` is the only build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/process/cli.ts');
await main(process.argv.slice(2));
