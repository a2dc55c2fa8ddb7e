#!/usr/bin/env node
// A stand-in for bin/docshard.js in tests of the local cluster: every role is a fake (see
// fake_docshard_role.ts), so the orchestration is tested without the real config and router.
import { register } from 'tsx/esm/api';

register();
const { runFakeRole } = await import('./fake_docshard_role.ts');
await runFakeRole(process.argv.slice(2));
