import { MongoClient, ReadPreference, type ClientSession } from 'mongodb';
import type { Doc } from './test_file.js';
import { pinnedMongos } from './transactions.js';

// The failPoint and targetedFailPoint operations: a fail point set on the server a test client
// (or a session's pinned mongos) talks to, and turned off after the test, as the format requires.

interface SetFailPoint {
  name: string;
  // The pinned mongos of a targetedFailPoint; none for one set through a test client, which the
  // runner's internal client reaches as well (both take the first host of the runner's URI).
  address?: string;
}

export class TestFailPoints {
  private readonly set: SetFailPoint[] = [];

  constructor(private readonly internal: MongoClient) {}

  /** failPoint: through the test client, on the server a primary read preference selects. */
  async configure(client: MongoClient, command: Doc): Promise<void> {
    const name = failPointName(command);
    await client.db('admin').command(command, { readPreference: ReadPreference.primary });
    this.set.push({ name });
  }

  /** targetedFailPoint: on the mongos the session is pinned to, through a client of its own. */
  async configureOnPinned(session: ClientSession, command: Doc): Promise<void> {
    const address = pinnedMongos(session);
    if (address === undefined) throw new Error('targetedFailPoint: the session is not pinned to a mongos');
    const name = failPointName(command);
    await withDirectClient(address, (client) => client.db('admin').command(command));
    this.set.push({ name, address });
  }

  /** Every fail point the test set, off; the first failure is thrown once all were tried. */
  async disableAll(): Promise<void> {
    const errors: unknown[] = [];
    for (const { name, address } of this.set.splice(0)) {
      const off = { configureFailPoint: name, mode: 'off' };
      await (address === undefined ? this.internal.db('admin').command(off) : withDirectClient(address, (c) => c.db('admin').command(off))).catch((err: unknown) => errors.push(err));
    }
    if (errors.length > 0) throw errors[0];
  }
}

function failPointName(command: Doc): string {
  const name = command.configureFailPoint;
  if (typeof name !== 'string') throw new Error('failPoint: configureFailPoint must name a fail point');
  return name;
}

async function withDirectClient<T>(address: string, body: (client: MongoClient) => Promise<T>): Promise<T> {
  const client = new MongoClient(`mongodb://${address}/?directConnection=true`);
  try {
    return await body(client);
  } finally {
    await client.close();
  }
}
