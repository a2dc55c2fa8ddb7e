import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { isVoter, majorityVoteCount, type ReplSetConfig } from '../repl/repl_set_config.js';
import type { Network } from '../wire/network.js';
import { heartbeatCommand } from './member_messages.js';

const QUORUM_CHECK_TIMEOUT_MS = 10_000;

// MongoDB's quorum check for a safe reconfig: before the new config is stored, a majority of its
// voters (this member one of them) must answer a heartbeat sent with it. A member not yet
// initiated answers NotYetInitialized, and counts: it is up, and will fetch the config once it is
// installed. Refused with NodeNotFound, naming who answered and who did not.
export async function checkReconfigQuorum(network: Network, config: ReplSetConfig, selfIndex: number, term: number): Promise<void> {
  const voters: string[] = [config.members[selfIndex]!.host];
  const failures: string[] = [];
  const cmd = heartbeatCommand(config, selfIndex, term);
  await Promise.all(config.members.map(async (m, i) => {
    if (i === selfIndex) return;
    let reason: string | undefined;
    try {
      const reply: Doc = await network.command(m.host, 'admin', cmd, { timeoutMs: QUORUM_CHECK_TIMEOUT_MS });
      if (reply.ok !== 1 && reply.code !== ErrorCodes.NotYetInitialized) reason = String(reply.errmsg);
    } catch (err) {
      reason = (err as Error).message;
    }
    if (reason !== undefined) failures.push(`${m.host} failed with ${reason}`);
    else if (isVoter(m)) voters.push(m.host);
  }));
  const required = majorityVoteCount(config);
  if (voters.length >= required) return;
  const bad = failures.length === 0 ? '' : `; the following nodes did not respond affirmatively: ${failures.join(', ')}`;
  throw new MongoError(ErrorCodes.NodeNotFound, `Quorum check failed because not enough voting nodes responded; required ${required} but only the following ${voters.length} voting nodes responded: ${voters.join(', ')}${bad}`);
}
