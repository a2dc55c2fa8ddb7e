import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { firstHostUri } from './entities.js';
import { countTests, formatFile, formatTotals } from './report.js';
import { parseVersion, type ServerInfo } from './requirements.js';
import { UnifiedRunner, type TestReport } from './unified_runner.js';

// npm run conformance -- --uri URI [--shard-collections] [--verbose] [--filter TEXT] PATH...
// A URI naming several mongos hosts serves the clients that ask for useMultipleMongoses.

const USAGE = 'usage: npm run conformance -- --uri URI [--shard-collections] [--verbose] [--filter TEXT] PATH...';
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

interface Cli {
  uri: string;
  shardCollections: boolean;
  verbose: boolean;
  filter?: string;
  paths: string[];
}

function parseCli(argv: string[]): Cli {
  const cli: Partial<Cli> & { paths: string[] } = { shardCollections: false, verbose: false, paths: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--uri') cli.uri = argv[++i];
    else if (a === '--filter') cli.filter = argv[++i];
    else if (a === '--shard-collections') cli.shardCollections = true;
    else if (a === '--verbose') cli.verbose = true;
    else if (a.startsWith('--')) throw new Error(`unknown flag ${a}`);
    else cli.paths.push(a);
  }
  if (!cli.uri) throw new Error('--uri is required');
  if (cli.paths.length === 0) throw new Error('no test paths given');
  return cli as Cli;
}

/** Files as given; directories contribute their .json files, recursively, in name order. */
async function collectFiles(paths: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    if (!(await stat(path)).isDirectory()) {
      files.push(path);
      continue;
    }
    const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (e.isDirectory()) files.push(...(await collectFiles([join(path, e.name)])));
      else if (e.name.endsWith('.json')) files.push(join(path, e.name));
    }
  }
  return files;
}

async function serverInfo(internal: MongoClient, shardCollections: boolean): Promise<ServerInfo> {
  const admin = internal.db('admin');
  const build = await admin.command({ buildInfo: 1 });
  const version = Array.isArray(build.versionArray) ? (build.versionArray as number[]).slice(0, 3).map(Number) : parseVersion(String(build.version));
  const parameters = new Map<string, unknown>();
  // A router says isdbgrid; a replica-set member names its set.
  const hello = await admin.command({ hello: 1 });
  const topology = shardCollections || hello.msg === 'isdbgrid' ? 'sharded' : typeof hello.setName === 'string' ? 'replicaset' : 'single';
  return {
    version,
    topology,
    async parameter(name) {
      if (!parameters.has(name)) {
        const reply = await admin.command({ getParameter: 1, [name]: 1 }).catch(() => ({}) as Record<string, unknown>);
        parameters.set(name, reply[name]);
      }
      return parameters.get(name);
    },
  };
}

async function main(): Promise<number> {
  let cli: Cli;
  let files: string[];
  try {
    cli = parseCli(process.argv.slice(2));
    files = await collectFiles(cli.paths);
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  const internal = new MongoClient(firstHostUri(cli.uri), { serverSelectionTimeoutMS: 10_000 });
  try {
    let server: ServerInfo;
    try {
      server = await serverInfo(internal, cli.shardCollections);
    } catch (err) {
      console.error(`cannot get buildInfo from ${cli.uri}: ${(err as Error).message}`);
      return EXIT_FAILED;
    }
    const runner = new UnifiedRunner(internal, server, cli);
    const all: TestReport[] = [];
    for (const file of files) {
      const report = await runner.runFile(file);
      if (cli.filter && report.tests.length === 0) continue;
      for (const line of formatFile(report, cli.verbose)) console.log(line);
      all.push(...report.tests);
    }
    const totals = countTests(all);
    console.log(formatTotals(totals));
    return totals.failed > 0 ? EXIT_FAILED : 0;
  } finally {
    await internal.close();
  }
}

process.exitCode = await main();
