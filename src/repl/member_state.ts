// MongoDB's MemberState names, with the numbers replSetGetStatus and heartbeats report.
export const MEMBER_STATE_CODES = {
  STARTUP: 0,
  PRIMARY: 1,
  SECONDARY: 2,
  RECOVERING: 3,
  STARTUP2: 5,
  UNKNOWN: 6,
  ARBITER: 7,
  DOWN: 8,
  ROLLBACK: 9,
  REMOVED: 10,
} as const;

export type MemberState = keyof typeof MEMBER_STATE_CODES;

// A member that serves reads, so another may sync from it.
export function isReadable(state: MemberState): boolean {
  return state === 'PRIMARY' || state === 'SECONDARY';
}
