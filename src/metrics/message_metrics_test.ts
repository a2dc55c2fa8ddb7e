import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BSON } from 'bson';
import { encodeOpMsgRequest } from '../wire/message.js';
import { CommandMetrics } from './command_metrics.js';
import { quantileSeconds } from './latency_histogram.js';
import { readReply, requestCommandName, withCommandMetrics } from './message_metrics.js';

const message = (doc: object): Buffer => encodeOpMsgRequest(BSON.serialize(doc), 1);

test('the command is named by the first element of the request body, read in place', () => {
  assert.equal(requestCommandName(message({ insert: 'c', documents: [], $db: 'app' })), 'insert');
  assert.equal(requestCommandName(Buffer.alloc(3)), undefined);
});

test('a reply says its outcome and how many retried statements it answered', () => {
  assert.deepEqual(readReply(message({ n: 1, ok: 1 })), { ok: true, retriedStatements: 0 });
  assert.deepEqual(readReply(message({ ok: 0, errmsg: 'no', code: 2 })), { ok: false, retriedStatements: 0 });
  assert.deepEqual(readReply(message({ n: 2, retriedStmtIds: [0, 1], ok: 1.0 })), { ok: true, retriedStatements: 2 });
});

test('every request is counted under a bounded name, with its outcome and latency', async () => {
  const metrics = new CommandMetrics();
  const handler = withCommandMetrics(metrics, (name) => (name === 'find' ? 'find' : 'unknown'), (_conn: null, msg: Buffer) => Promise.resolve(requestCommandName(msg) === 'find' ? message({ ok: 1 }) : message({ ok: 0 })));
  await handler(null, message({ find: 'c', $db: 'app' }));
  await handler(null, message({ madeUp: 1, $db: 'app' }));
  const byName = new Map([...metrics.commands()].map((c) => [c.command, c]));
  assert.equal(byName.get('find')?.succeeded, 1);
  assert.equal(byName.get('find')?.type, 'query');
  assert.equal(byName.get('unknown')?.failed, 1);
});

test('quantiles interpolate inside their bucket, as histogram_quantile does', () => {
  // 10 observations in the first bucket (0–0.5 ms): the median is at 0.25 ms.
  assert.equal(quantileSeconds([10, 0, 0], 0.5), 0.00025);
  assert.equal(quantileSeconds([0, 0, 0], 0.5), undefined);
});
