import { randomBytes } from 'node:crypto';
import { UUID } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { SCRAM_MECHANISMS, SCRAM_PARAMETERS, scramCredential, scramPassword, type ScramCredential, type ScramMechanism } from './scram.js';

// Every database's users live in one collection, keyed "db.user", as in MongoDB.
export const USERS_NS = 'admin.system.users';

export interface RoleName { role: string; db: string }

export interface UserName { user: string; db: string }

// MongoDB's built-in roles: the first list exists in every database, the second only in admin.
const DATABASE_ROLES = new Set(['read', 'readWrite', 'dbAdmin', 'dbOwner', 'userAdmin', 'enableSharding']);
const ADMIN_ROLES = new Set([
  'readAnyDatabase', 'readWriteAnyDatabase', 'userAdminAnyDatabase', 'dbAdminAnyDatabase', 'clusterAdmin', 'clusterManager',
  'clusterMonitor', 'hostManager', 'backup', 'restore', 'root', '__system',
]);

export function isBuiltinRole(role: RoleName): boolean {
  return DATABASE_ROLES.has(role.role) || (role.db === 'admin' && ADMIN_ROLES.has(role.role));
}

// The built-in roles of a database, by name, as rolesInfo lists them.
export function builtinRoleNames(db: string): RoleName[] {
  return [...DATABASE_ROLES, ...(db === 'admin' ? ADMIN_ROLES : [])].sort().map((role) => ({ role, db }));
}

export function userId(name: UserName): string {
  return `${name.db}.${name.user}`;
}

// createUser's `roles`: a bare name is a role of the command's database; each must be a built-in
// role or one `exists` finds (a user-defined role).
export function parseRoles(value: unknown, db: string, exists: (role: RoleName) => boolean = () => false): RoleName[] {
  if (!Array.isArray(value)) throw new MongoError(ErrorCodes.BadValue, '"roles" field must be an array');
  return value.map((r: unknown) => {
    const role = typeof r === 'string' ? { role: r, db } : r !== null && typeof r === 'object' && typeof (r as Doc).role === 'string' && typeof (r as Doc).db === 'string' ? { role: (r as Doc).role as string, db: (r as Doc).db as string } : undefined;
    if (role === undefined) throw new MongoError(ErrorCodes.BadValue, 'Role names must be either strings or objects');
    if (!isBuiltinRole(role) && !exists(role)) throw new MongoError(ErrorCodes.RoleNotFound, `Could not find role: ${role.role}@${role.db}`);
    return role;
  });
}

export function parseMechanisms(value: unknown): ScramMechanism[] {
  if (value === undefined) return [...SCRAM_MECHANISMS];
  if (!Array.isArray(value) || value.length === 0) throw new MongoError(ErrorCodes.BadValue, 'mechanisms field must not be empty');
  for (const m of value) {
    if (!SCRAM_MECHANISMS.includes(m as ScramMechanism)) throw new MongoError(ErrorCodes.BadValue, `Unknown auth mechanism '${String(m)}'`);
  }
  return value as ScramMechanism[];
}

// The document admin.system.users holds for a user, credentials made from a fresh salt each.
export function userDocument(name: UserName, password: string, roles: RoleName[], mechanisms: readonly ScramMechanism[]): Doc {
  const credentials: Record<string, ScramCredential> = {};
  for (const m of mechanisms) {
    const { iterationCount, saltBytes } = SCRAM_PARAMETERS[m];
    credentials[m] = scramCredential(m, scramPassword(m, name.user, password), randomBytes(saltBytes), iterationCount);
  }
  return { _id: userId(name), userId: new UUID(), user: name.user, db: name.db, credentials, roles };
}

export function credentialOf(doc: Doc, mechanism: ScramMechanism): ScramCredential | undefined {
  const c = (doc.credentials as Record<string, ScramCredential> | undefined)?.[mechanism];
  return c === undefined ? undefined : c;
}

export function mechanismsOf(doc: Doc): ScramMechanism[] {
  return SCRAM_MECHANISMS.filter((m) => credentialOf(doc, m) !== undefined);
}
