import assert from 'node:assert/strict';
import { MongoClient, MongoServerError } from 'mongodb';

// The server error `run` fails with (an assertion failure when it succeeds or fails otherwise).
export async function refusal(run: () => Promise<unknown>): Promise<MongoServerError> {
  const err = await run().then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof MongoServerError, `expected a server error, got ${String(err)}`);
  return err;
}

// `run` with a client of its own on `uri` (a user's login), closed after.
export async function as<T>(uri: string, run: (client: MongoClient) => Promise<T>): Promise<T> {
  const client = await MongoClient.connect(uri);
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}
