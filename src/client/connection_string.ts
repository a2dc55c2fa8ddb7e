import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

// A host string as MongoDB's ConnectionString reads one: `setName/h1:p1,h2:p2` names a replica
// set by a seed list of its members, `host:port` one server.
export interface ConnectionString {
  // Absent for a single server.
  setName?: string;
  hosts: string[];
}

// Whether `host` names a set. The check alone is on every request's path, so it allocates nothing.
export function isSetConnectionString(host: string): boolean {
  return host.indexOf('/') >= 0;
}

export function parseConnectionString(text: string): ConnectionString {
  const slash = text.indexOf('/');
  const setName = slash < 0 ? undefined : text.slice(0, slash);
  if (setName === '') throw bad(text, 'the set name is empty');
  const list = slash < 0 ? text : text.slice(slash + 1);
  const hosts = list.split(',').map((h) => h.trim());
  if (hosts.some((h) => h === '')) throw bad(text, 'a host is empty');
  for (const h of hosts) if (!validHost(h)) throw bad(text, `"${h}" is not host:port`);
  if (setName === undefined && hosts.length > 1) throw bad(text, 'a list of hosts needs a set name');
  return setName === undefined ? { hosts } : { setName, hosts: [...new Set(hosts)] };
}

function validHost(h: string): boolean {
  const colon = h.lastIndexOf(':');
  if (colon <= 0) return false;
  const port = Number(h.slice(colon + 1));
  return Number.isInteger(port) && port > 0 && port <= 65535 && !h.includes('/');
}

function bad(text: string, why: string): MongoError {
  return new MongoError(ErrorCodes.FailedToParse, `invalid connection string "${text}": ${why}`);
}
