import { parseArgs } from 'node:util';
import { createLogger } from './logger.js';
import { startNode } from './node_process.js';

const USAGE = `usage:
  docshard shard  --port P --dbpath D [--bind_ip 127.0.0.1] [--enableTestCommands]
  docshard config --port P --dbpath D [--bind_ip 127.0.0.1] [--enableTestCommands]`;

export async function main(argv: string[]): Promise<void> {
  const [role, ...rest] = argv;
  if (role !== 'shard' && role !== 'config') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(role === undefined || role === '--help' ? 0 : 2);
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      port: { type: 'string', default: role === 'config' ? '27019' : '27018' },
      dbpath: { type: 'string' },
      bind_ip: { type: 'string', default: '127.0.0.1' },
      enableTestCommands: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.dbpath) {
    process.stderr.write(`--dbpath is required\n${USAGE}\n`);
    process.exit(2);
  }
  const { logger, recent } = createLogger(`docshard-${role}`);
  const node = await startNode({
    role,
    port: Number(values.port),
    bindIp: values.bind_ip!,
    dbpath: values.dbpath,
    enableTestCommands: values.enableTestCommands!,
  }, logger, recent);
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ c: 'CONTROL', signal }, 'Shutting down');
    node.stop().then(() => process.exit(0), (err: unknown) => {
      logger.error({ c: 'CONTROL', err }, 'Error during shutdown');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
