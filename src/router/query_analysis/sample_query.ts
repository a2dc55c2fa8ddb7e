import { UUID } from 'bson';
import type { Doc } from '../../bson/values.js';
import type { RouterServices } from '../router_services.js';
import { attachSampleId, isSampledCommand, READ_COMMANDS, sampledCommands, sampledQueryDocument } from './sampled_query.js';

// Called by the dispatcher for every command it routes: with no analyzer on anywhere, one check.
// A read or write of a collection whose analyzer is on is recorded, as long as its bucket has a
// token, statement by statement, before it runs (as mongos decides when it routes it); a sampled
// update statement or findAndModify takes the sample's id to its shard.
export function sampleRoutedQuery(router: RouterServices, name: string, db: string, cmd: Doc): void {
  const sampler = router.queryAnalysis;
  if (!sampler.anyActive || !isSampledCommand(name)) return;
  const coll = cmd[name];
  if (typeof coll !== 'string') return;
  const ns = `${db}.${coll}`;
  if (!sampler.isSampled(ns)) return;
  for (const [statement, sampled] of sampledCommands(name, cmd).entries()) {
    const now = router.wallClock.now();
    const analyzer = sampler.take(ns, now);
    if (analyzer === undefined) return;
    const sampleId = new UUID();
    sampler.record(ns, sampledQueryDocument(sampleId, ns, analyzer.collUuid, name, sampled, now), READ_COMMANDS.has(name));
    attachSampleId(name, cmd, statement, sampleId);
  }
}
