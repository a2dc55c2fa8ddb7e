// The bank invariant: transfers move money between accounts and never make or lose any, so every
// snapshot of all balances sums to the initial total, and once the transfers have stopped each
// balance is its initial one plus what the committed transfers brought it.

export type Account = string | number;
export type Balances = ReadonlyMap<Account, number>;

export interface Transfer {
  from: Account;
  to: Account;
  amount: number;
}

export interface BankReport {
  // Reads (by position) that do not sum to the initial total or do not name every account.
  badReads: Array<{ index: number; total: number; missing: Account[]; read: Balances }>;
  // Accounts whose final balance is not the one the committed transfers give.
  badFinal: Array<{ account: Account; expected: number | undefined; actual: number | undefined }>;
}

export function checkBank(initial: Balances, transfers: readonly Transfer[], reads: readonly Balances[], final: Balances): BankReport {
  const total = sum(initial);
  const badReads: BankReport['badReads'] = [];
  reads.forEach((read, index) => {
    const missing = [...initial.keys()].filter((a) => !read.has(a));
    if (sum(read) !== total || missing.length > 0) badReads.push({ index, total: sum(read), missing, read });
  });
  const expected = new Map(initial);
  for (const { from, to, amount } of transfers) {
    if (!expected.has(from) || !expected.has(to)) throw new Error(`transfer between unknown accounts ${String(from)} and ${String(to)}`);
    expected.set(from, expected.get(from)! - amount);
    expected.set(to, expected.get(to)! + amount);
  }
  const accounts = new Set([...expected.keys(), ...final.keys()]);
  const badFinal = [...accounts].filter((a) => expected.get(a) !== final.get(a)).map((account) => ({ account, expected: expected.get(account), actual: final.get(account) }));
  return { badReads, badFinal };
}

function sum(balances: Balances): number {
  let total = 0;
  for (const balance of balances.values()) total += balance;
  return total;
}
