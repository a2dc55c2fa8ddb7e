import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import { createLogger } from './logger.js';
import { startNode } from './node_process.js';
import { startRouter } from './router_process.js';
import { runUp, UP_USAGE } from './up_command.js';
import { parseRouterSetParameters, parseSetParameters } from './set_parameter.js';
import { configureScripting, takeScriptParameters } from '../query/js/script_settings.js';
import { LockFileHeldError } from './lock_file.js';
import { watchSupervisorPipe } from './supervisor_pipe.js';
import { serveNodeHttp, serveRouterHttp } from './observability.js';
import { consoleRoutes } from '../console/console_server.js';
import { KeyFileError } from '../auth/key_file.js';
import { readKeyFile } from './key_file_reader.js';
import { readTlsFlags, TlsOptionsError } from './tls_files.js';
import type { ProcessTls } from '../wire/tls_mode.js';
import { parseConnectionString } from '../client/connection_string.js';

const USAGE = `usage:
  docshard shard  --port P --dbpath D [--replSet NAME [--oplogSize MB]] [--bind_ip 127.0.0.1] [--auth] [--keyFile F] [--tlsMode M --tlsCertificateKeyFile F [--tlsCAFile F] [--tlsAllowConnectionsWithoutCertificates]] [--maxConns N] [--enableTestCommands] [--noscripting] [--setParameter internalQueryJavaScriptFnTimeoutMillis|internalQueryJavaScriptHeapSizeLimitMB=N] [--setParameter orphanCleanupDelaySecs|migrateClonePercentUnderLoad|rangeDeleterBatchSize|rangeDeleterBatchDelayMS|ttlMonitorSleepSecs|logicalSessionRefreshMillis|transactionLifetimeLimitSeconds=N]
  docshard config --port P --dbpath D [--replSet NAME [--oplogSize MB]] [--bind_ip 127.0.0.1] [--auth] [--keyFile F] [--tlsMode M --tlsCertificateKeyFile F [--tlsCAFile F] [--tlsAllowConnectionsWithoutCertificates]] [--maxConns N] [--enableTestCommands]
                  [--setParameter balancerIdleRoundIntervalMillis|balancerMigrationsThrottlingMs|autoMergerIntervalSecs|minSnapshotHistoryWindowInSeconds|ttlMonitorSleepSecs|logicalSessionRefreshMillis|reshardingCriticalSectionTimeoutMillis=N]
  docshard router --port P --configdb HOST:PORT|SETNAME/HOST:PORT,... [--bind_ip 127.0.0.1] [--auth] [--keyFile F] [--tlsMode M --tlsCertificateKeyFile F [--tlsCAFile F] [--tlsAllowConnectionsWithoutCertificates]] [--maxConns N] [--enableTestCommands] [--noscripting] [--setParameter routerFastPaths=true|false] [--setParameter logicalSessionRefreshMillis=N]
  every role also takes [--httpPort H]: Prometheus metrics at /metrics, and a router's console at /
${UP_USAGE}`;

// A supervised process whose supervisor died has nobody left to kill it if its clean shutdown
// hangs: it exits anyway after this long, which, like kill -9, loses nothing acknowledged.
const ORPHAN_SHUTDOWN_MS_MAX = 3000;
// mongod's exit code when its dbpath is in use (DBPathInUse).
const DBPATH_IN_USE_EXIT_CODE = 100;
// mongod's default net.maxIncomingConnections (DEFAULT_MAX_CONN).
const MAX_CONNS_DEFAULT = 1_000_000;

// --noscripting and the script limits set the process's script engine (src/query/js); a router's
// runs no script itself. The other parameters are the process's own.
function scriptParameters(setParameter: string[], noscripting: boolean, local: boolean): string[] {
  const { rest, limits } = takeScriptParameters(setParameter);
  configureScripting({ ...limits, enabled: !noscripting, local });
  return rest;
}

function usageExit(message: string | undefined, code: number): never {
  process.stderr.write(`${message ? `${message}\n` : ''}${USAGE}\n`);
  process.exit(code);
}

export async function main(argv: string[]): Promise<void> {
  const [role, ...rest] = argv;
  if (role === 'up') return runUp(rest);
  if (role !== 'shard' && role !== 'config' && role !== 'router') usageExit(undefined, role === undefined || role === '--help' ? 0 : 2);
  const { values } = parseArgs({
    args: rest,
    options: {
      port: { type: 'string', default: role === 'config' ? '27019' : role === 'router' ? '27017' : '27018' },
      dbpath: { type: 'string' },
      configdb: { type: 'string' },
      bind_ip: { type: 'string', default: '127.0.0.1' },
      enableTestCommands: { type: 'boolean', default: false },
      auth: { type: 'boolean', default: false },
      keyFile: { type: 'string' },
      tlsMode: { type: 'string' },
      tlsCertificateKeyFile: { type: 'string' },
      tlsCAFile: { type: 'string' },
      tlsAllowConnectionsWithoutCertificates: { type: 'boolean', default: false },
      maxConns: { type: 'string', default: String(MAX_CONNS_DEFAULT) },
      setParameter: { type: 'string', multiple: true, default: [] },
      httpPort: { type: 'string' },
      replSet: { type: 'string' },
      oplogSize: { type: 'string' },
      noscripting: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const { logger, recent } = createLogger(`docshard-${role}`);
  let stop: (() => Promise<void>) | undefined;
  let stopping = false;
  // Handlers go in before the server starts, so a signal right after "Waiting for connections"
  // still shuts down cleanly.
  const shutdown = (cause: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ c: 'CONTROL', cause }, 'Shutting down');
    (stop ?? (async () => undefined))().then(() => process.exit(0), (err: unknown) => {
      logger.error({ c: 'CONTROL', err }, 'Error during shutdown');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  watchSupervisorPipe(() => {
    setTimeout(() => process.exit(1), ORPHAN_SHUTDOWN_MS_MAX).unref();
    shutdown('supervisor gone');
  });
  // As mongod and mongos: a key file turns authentication on, and a bad one refuses to start.
  let keyFile: { path: string; key: string } | undefined;
  if (values.keyFile !== undefined) {
    try {
      keyFile = readKeyFile(values.keyFile);
    } catch (err) {
      if (!(err instanceof KeyFileError)) throw err;
      logger.error({ c: 'ACCESS', keyFile: values.keyFile }, err.message);
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
  }
  const auth = values.auth === true || keyFile !== undefined;
  let tls: ProcessTls | undefined;
  try {
    tls = readTlsFlags(values);
  } catch (err) {
    if (!(err instanceof TlsOptionsError)) throw err;
    logger.error({ c: 'NETWORK' }, err.message);
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  const maxConns = Number(values.maxConns);
  if (!Number.isInteger(maxConns) || maxConns < 1) usageExit(`invalid --maxConns ${values.maxConns}`, 2);
  if (role === 'router') {
    if (!values.configdb) usageExit('--configdb is required', 2);
    // A config server replica set is named as MongoDB names it: cfg/h1:p1,h2:p2,...
    try {
      parseConnectionString(values.configdb);
    } catch {
      usageExit(`invalid --configdb ${values.configdb}: HOST:PORT or SETNAME/HOST:PORT,...`, 2);
    }
    let parameters;
    try {
      parameters = parseRouterSetParameters(scriptParameters(values.setParameter ?? [], values.noscripting!, false));
    } catch (err) {
      usageExit((err as Error).message, 2);
    }
    const router = await startRouter({ port: Number(values.port), bindIp: values.bind_ip!, configHost: values.configdb, enableTestCommands: values.enableTestCommands!, auth, ...(keyFile === undefined ? {} : { keyFile }), ...(tls === undefined ? {} : { tls }), maxConns, parameters }, logger, recent);
    // The console asks for no login and its Kill button runs killOp: a router with authentication
    // serves only /metrics on its HTTP port.
    if (auth && values.httpPort !== undefined) logger.warn({ c: 'NETWORK' }, 'The console is off on a router with authentication; the HTTP port serves /metrics only');
    const http = values.httpPort === undefined ? undefined : await serveRouterHttp(router.services, httpPort(values.httpPort), logger, auth ? undefined : consoleRoutes(router.services));
    stop = async () => { await http?.close(); await router.stop(); };
    return;
  }
  if (!values.dbpath) usageExit('--dbpath is required', 2);
  let parameters;
  try {
    parameters = parseSetParameters(scriptParameters(values.setParameter ?? [], values.noscripting!, true));
  } catch (err) {
    usageExit((err as Error).message, 2);
  }
  const node = await startNode({
    role,
    port: Number(values.port),
    bindIp: values.bind_ip!,
    dbpath: values.dbpath,
    enableTestCommands: values.enableTestCommands!,
    auth,
    ...(keyFile === undefined ? {} : { keyFile }),
    ...(tls === undefined ? {} : { tls }),
    maxConns,
    parameters,
    ...(values.replSet === undefined ? {} : { replSet: values.replSet }),
    ...(values.oplogSize === undefined ? {} : { oplogSizeMB: oplogSizeMB(values.oplogSize) }),
  }, logger, recent).catch((err: unknown) => refuseIfLocked(err, logger));
  const http = values.httpPort === undefined ? undefined : await serveNodeHttp(node.services, httpPort(values.httpPort), logger);
  stop = async () => { await http?.close(); await node.stop(); };
}

// --oplogSize: megabytes, a positive number.
function oplogSizeMB(text: string): number {
  const mb = Number(text);
  if (!Number.isFinite(mb) || mb <= 0) usageExit(`invalid --oplogSize ${text}`, 2);
  return mb;
}

function httpPort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) usageExit(`invalid --httpPort ${text}`, 2);
  return port;
}

// A data directory in use is a refusal the user acts on, not a crash: the message alone, on the
// log and on the terminal, and mongod's exit code.
function refuseIfLocked(err: unknown, logger: Logger): never {
  if (!(err instanceof LockFileHeldError)) throw err;
  logger.error({ c: 'STORAGE', file: err.file, holderPid: err.holderPid }, err.message);
  process.stderr.write(`DBPathInUse: ${err.message}\n`);
  process.exit(DBPATH_IN_USE_EXIT_CODE);
}
