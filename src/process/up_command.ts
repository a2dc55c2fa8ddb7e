import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from './logger.js';
import { LocalCluster } from './local_cluster.js';
import { acquireLockFile, LockFileHeldError } from './lock_file.js';

// In the cluster's directory, held while this process runs: two `up`s on one directory would
// start two sets of children on the same data and ports.
const LOCK_FILE_NAME = 'up.lock';

export const UP_USAGE = '  docshard up [--shards N (2)] [--replicas N (1 for a new directory, else as it was made; 1-7 members a set, 0 single processes)] [--port P (27017)] [--httpPort H (P + 1000; 0 with --port 0)] [--dir D (./docshard-data)] [--enableTestCommands] [--auth]';

// `docshard up`: runs a local cluster until Ctrl-C/SIGTERM (exit 0) or until one of its processes
// dies on its own (exit 1, after stopping the others); refuses a directory another live `up`
// holds (exit 1, naming its pid) before it starts anything. Killed outright, it leaves no child
// behind: each watches its supervisor pipe (supervisor_pipe.ts) and shuts down. The plain URI
// line is for people and scripts; the "Cluster ready" JSON line is for tools that already read
// the JSON log. `bin` is the program each child runs (tests pass a stand-in).
export async function runUp(argv: string[], bin?: string): Promise<void> {
  const { values } = parseUpArgs(argv);
  const shards = Number(values.shards);
  const port = Number(values.port);
  // The console's port follows the router's, as mongod's HTTP interface once did (27017 -> 28017).
  const httpPort = values.httpPort === undefined ? (port === 0 ? 0 : port + 1000) : Number(values.httpPort);
  // A set has at most 7 voting members, and replSetInitiate makes each member one; 0 is no set.
  const replicas = values.replicas === undefined ? undefined : Number(values.replicas);
  const badReplicas = replicas !== undefined && !(values.replicas!.trim() !== '' && Number.isInteger(replicas) && replicas >= 0 && replicas <= 7);
  if (!Number.isInteger(shards) || shards < 1 || badReplicas || ![port, httpPort].every((p) => Number.isInteger(p) && p >= 0 && p <= 65535)) {
    refuseArguments('invalid --shards, --replicas, --port or --httpPort');
  }
  const { logger } = createLogger('docshard-up');
  mkdirSync(values.dir!, { recursive: true });
  const lock = await acquireLockFile(path.join(values.dir!, LOCK_FILE_NAME), logger).catch((err: unknown) => {
    if (!(err instanceof LockFileHeldError)) throw err;
    logger.error({ c: 'CONTROL', file: err.file, holderPid: err.holderPid }, err.message);
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
  const cluster = new LocalCluster({ shards, port, dir: values.dir!, logger, bin, enableTestCommands: values.enableTestCommands!, httpPort, auth: values.auth!, ...(replicas === undefined ? {} : { replicas }) });
  let finishing = false;
  const finish = (exitCode: number): void => {
    if (finishing) return;
    finishing = true;
    logger.info({ c: 'CONTROL' }, 'Stopping the cluster');
    cluster.stop().then(() => {
      lock.release();
      process.exit(exitCode);
    }, (err: unknown) => {
      logger.error({ c: 'CONTROL', err }, 'Error while stopping the cluster');
      process.exit(1);
    });
  };
  process.on('SIGINT', () => finish(0));
  process.on('SIGTERM', () => finish(0));
  // The children are in process groups of their own, so a closed terminal reaches only this
  // process: left to its default, SIGHUP would end it and leave them running.
  process.on('SIGHUP', () => finish(0));
  // Output is best effort: a reader that goes away (`| head`, a closed terminal) must not end
  // this process with an EPIPE before it has stopped its children.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  void cluster.unexpectedExit.then((exit) => {
    logger.error({ c: 'CONTROL', child: exit.name, code: exit.code, signal: exit.signal }, 'Child exited unexpectedly');
    finish(1);
  });
  try {
    const ready = await cluster.start();
    const consoleLine = ready.keyFile === undefined ? `console: ${ready.consoleUrl}` : `console: off with authentication (it asks for no login); metrics: ${ready.consoleUrl}metrics`;
    process.stdout.write(`${ready.uri}\n${consoleLine}\n${ready.keyFile === undefined ? '' : firstUserHint(ready.uri, ready.keyFile)}`);
    logger.info({ c: 'CONTROL', uri: ready.uri, port: ready.port, consoleUrl: ready.consoleUrl, ...(ready.keyFile === undefined ? {} : { keyFile: ready.keyFile }) }, 'Cluster ready');
  } catch (err) {
    // After a signal the failure is only the children going away as asked.
    if (!finishing) logger.error({ c: 'CONTROL', err }, 'Could not start the cluster');
    finish(1);
  }
}

// An option without its value, or with one that starts with a dash (`--replicas -1`), is a
// mistake in the command line as a value out of range is, with the same exit code.
function parseUpArgs(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        shards: { type: 'string', default: '2' },
        port: { type: 'string', default: '27017' },
        dir: { type: 'string', default: './docshard-data' },
        enableTestCommands: { type: 'boolean', default: false },
        auth: { type: 'boolean', default: false },
        httpPort: { type: 'string' },
        replicas: { type: 'string' },
      },
      strict: true,
    });
  } catch (err) {
    return refuseArguments((err as Error).message);
  }
}

function refuseArguments(message: string): never {
  process.stderr.write(`${message}\nusage:\n${UP_USAGE}\n`);
  process.exit(2);
}

// With authentication on, nothing runs before a login, and the first user can only be made from
// this host while none exists (the localhost exception).
function firstUserHint(uri: string, keyFile: string): string {
  return [
    `authentication is on (the processes share the key in ${keyFile}); while no user exists, create the first one from this host:`,
    `  npx mongosh "${uri}/admin" --eval "db.createUser({user: 'admin', pwd: passwordPrompt(), roles: ['root']})"`,
    `then connect with ${uri.replace('mongodb://', 'mongodb://admin:PASSWORD@')}/?authSource=admin`,
    '',
  ].join('\n');
}
