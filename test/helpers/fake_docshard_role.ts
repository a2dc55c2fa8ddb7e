import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { deserializeDocument, serializeDocument, type Doc } from '../../src/bson/values.js';
import { parseOpMsg, readHeader } from '../../src/wire/message.js';
import { opMsgReply } from './wire_fuzz.js';
import { TcpServer } from '../../src/wire/tcp_server.js';
import { watchSupervisorPipe } from '../../src/process/supervisor_pipe.js';

// A role that only listens, answers ok: 1 to every command (and, as a member of a set, says it is
// primary to `hello`) and writes what happens to it into the journal file named by
// DOCSHARD_FAKE_JOURNAL, one line per event:
//   start <name> <port> <pid> | replSetInitiate <set> <hosts> | addShard <host> <name> | stop <name> | orphaned <name>
// ('orphaned': its supervisor pipe closed, and it exits as the real roles do).
// DOCSHARD_FAKE_FAIL_ADD_SHARD=1 makes the router answer addShard with ok: 0.
export async function runFakeRole(argv: string[]): Promise<void> {
  const [role, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: { port: { type: 'string' }, dbpath: { type: 'string' }, configdb: { type: 'string' }, httpPort: { type: 'string' }, replSet: { type: 'string' }, bind_ip: { type: 'string' } },
    strict: true,
  });
  const name = role === 'router' ? 'router' : path.basename(values.dbpath!);
  const journal = (line: string): void => appendFileSync(process.env.DOCSHARD_FAKE_JOURNAL!, `${line}\n`);
  const server = new TcpServer({
    onMessage: async (_conn, message) => {
      const header = readHeader(message);
      const body = deserializeDocument(parseOpMsg(header, message).body);
      let reply: Doc = { ok: 1 };
      if (values.replSet !== undefined && 'hello' in body) reply = { isWritablePrimary: true, setName: values.replSet, ok: 1 };
      if ('replSetInitiate' in body) {
        const config = body.replSetInitiate as { _id: string; members: Array<{ host: string }> };
        journal(`replSetInitiate ${config._id} ${config.members.map((m) => m.host).join(',')}`);
      }
      if (role === 'router' && 'addShard' in body) {
        journal(`addShard ${String(body.addShard)} ${String(body.name)}`);
        if (process.env.DOCSHARD_FAKE_FAIL_ADD_SHARD === '1') reply = { ok: 0, errmsg: 'refused by the fake', code: 96, codeName: 'OperationFailed' };
      }
      return opMsgReply(serializeDocument(reply), 0, header.requestId);
    },
  });
  // Installed before it says it listens: a SIGTERM may follow that line at once.
  const stop = (event: string): void => {
    journal(`${event} ${name}`);
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('stop'));
  watchSupervisorPipe(() => stop('orphaned'));
  const port = await server.listen(Number(values.port), values.bind_ip ?? '127.0.0.1');
  journal(`start ${name} ${port} ${process.pid}`);
  process.stdout.write(`${JSON.stringify({ level: 30, msg: 'Waiting for connections', port })}\n`);
  // No HTTP server: the port it names is only for the orchestration to pass on.
  if (values.httpPort !== undefined) process.stdout.write(`${JSON.stringify({ level: 30, msg: 'Serving HTTP', httpPort: Number(values.httpPort) || port + 1000 })}\n`);
}
