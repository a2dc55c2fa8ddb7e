import type { Doc } from '../bson/values.js';
import { mayListAllDatabases, mayUseDatabase, type Authorization } from './authorization_policy.js';
import { attachCursorOwner, type CursorOwners } from './cursor_owner.js';
import type { UserName } from './users.js';

// What a logged-in user's reply becomes, with --auth: the cursor it opened is its user's
// (cursor_owner.ts), and listDatabases lists only the databases the user may use, as MongoDB's
// authorizedDatabases does, unless the user may list them all and did not ask for its own only.
export function authorizedReply(cursors: CursorOwners, user: UserName & Authorization, name: string, cmd: Doc, reply: Doc): Doc {
  if (name === 'listDatabases' && Array.isArray(reply.databases) && (cmd.authorizedDatabases === true || (cmd.authorizedDatabases === undefined && !mayListAllDatabases(user)))) {
    const databases = (reply.databases as Doc[]).filter((d) => typeof d.name === 'string' && mayUseDatabase(user, d.name));
    const totalSize = typeof reply.totalSize === 'number' ? { totalSize: databases.reduce((sum, d) => sum + (typeof d.sizeOnDisk === 'number' ? d.sizeOnDisk : 0), 0) } : {};
    return { ...reply, databases, ...totalSize };
  }
  return attachCursorOwner(cursors, user, name, reply);
}
