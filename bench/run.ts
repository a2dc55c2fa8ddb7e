// npm run bench -- <suite>: runs one benchmark suite and prints its table.
import { runNodeBench } from './node_bench.js';
import { runNodeRequestBench } from './node_request_bench.js';
import { runRouterBench } from './router_bench.js';
import { runRouterProfile } from './router_profile.js';
import { runRetryableBench } from './retryable_bench.js';
import { runSessionRecordBench } from './session_record_bench.js';
import { runBalancerBench } from './balancer_bench.js';
import { runMigrationBench } from './migration_bench.js';
import { runTxnBench } from './txn_bench.js';
import { runSecurityBench } from './security_bench.js';
import { runDdlBench } from './ddl_bench.js';
import { runStartupBench } from './startup_bench.js';
import { runQueryBench } from './query_bench.js';
import { runScriptBench } from './script_bench.js';
import { runReplsetBench } from './replset_bench.js';
import { runShardsetsBench } from './shardsets_bench.js';
import { runChangeStreamsBench } from './changestreams_bench.js';
import { runReshardBench } from './reshard_bench.js';
import { runReshard1mBench } from './reshard_1m_bench.js';
import { spawnThroughBin } from '../test/helpers/test_bin.js';

const suites: Record<string, () => Promise<void>> = { node: runNodeBench, 'node-request': runNodeRequestBench, router: runRouterBench, 'router-profile': runRouterProfile, retryable: runRetryableBench, 'session-record': runSessionRecordBench, balancer: runBalancerBench, migration: runMigrationBench, txn: runTxnBench, security: runSecurityBench, ddl: runDdlBench, startup: runStartupBench, query: runQueryBench, script: runScriptBench, replset: runReplsetBench, shardsets: runShardsetsBench, changestreams: runChangeStreamsBench, reshard: runReshardBench, 'reshard-1m': runReshard1mBench };
const name = process.argv[2] ?? 'node';
const suite = suites[name];
if (!suite) {
  process.stderr.write(`unknown suite '${name}'; known: ${Object.keys(suites).join(', ')}\n`);
  process.exit(2);
}
spawnThroughBin();
await suite();
