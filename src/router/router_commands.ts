import type { RouterCommand } from './router_services.js';
import {
  addShardCommand, enableShardingCommand, flushRouterConfigCommand, getShardVersionCommand, listShardsCommand,
  mergeChunksCommand, refineCollectionShardKeyCommand, shardCollectionCommand, splitCommand,
} from './commands/cluster_admin.js';
import {
  clusterBuildInfoCommand, clusterGetLogCommand, clusterProfileCommand, clusterSetParameterCommand,
  clusterGetCmdLineOptsCommand, clusterGetParameterCommand, clusterHelloCommand, clusterHostInfoCommand, clusterListCommandsCommand, clusterPingCommand,
  clusterServerStatusCommand, clusterWhatsMyUriCommand, isDbGridCommand, clusterConnPoolStatsCommand,
} from './commands/cluster_diagnostics.js';
import {
  clusterConnectionStatusCommand, clusterCreateUserCommand, clusterSaslContinueCommand, clusterSaslStartCommand, clusterUserCommands,
} from './commands/cluster_auth.js';
import { clusterFindCommand, clusterGetMoreCommand, clusterKillCursorsCommand } from './commands/cluster_find.js';
import { clusterSessionCommands } from './commands/cluster_sessions.js';
import { clusterAggregateCommand, clusterCountCommand, clusterDistinctCommand } from './commands/cluster_read.js';
import { clusterMapReduceCommand } from './commands/cluster_scripts.js';
import { clusterDeleteCommand, clusterInsertCommand, clusterUpdateCommand } from './commands/cluster_write.js';
import { clusterCurrentOpCommand, withClusterSourceStages } from './commands/cluster_aggregate_sources.js';
import { clusterFindAndModifyCommand } from './commands/cluster_find_and_modify.js';
import { clusterExplainCommand } from './commands/cluster_explain.js';
import { moveChunkCommand, moveRangeCommand } from './commands/cluster_move.js';
import { movePrimaryCommand, removeShardCommand } from './commands/cluster_remove_shard.js';
import { clusterAbortTransactionCommand, clusterCommitTransactionCommand } from './commands/cluster_transactions.js';
import { zoneRouterCommands } from './commands/cluster_zones.js';
import { reshardRouterCommands } from './commands/cluster_reshard.js';
import { moveCollectionRouterCommands } from './commands/cluster_move_collection.js';
import { clusterKillOpCommand } from './commands/cluster_kill_op.js';
import { balancerRouterCommands } from './commands/cluster_balancer.js';
import { checkMetadataConsistencyCommand } from './commands/cluster_check_metadata_consistency.js';
import { analyzeShardKeyCommand, configureQueryAnalyzerCommand } from './commands/cluster_query_analysis.js';
import {
  clusterCollStatsCommand, clusterCreateCommand, clusterCreateIndexesCommand, clusterDbStatsCommand, clusterDropCommand,
  clusterDropDatabaseCommand, clusterDropIndexesCommand, clusterCollModCommand, clusterListCollectionsCommand, clusterListDatabasesCommand,
  clusterDataSizeCommand, clusterListIndexesCommand, clusterRenameCollectionCommand, clusterValidateCommand,
} from './commands/cluster_ddl.js';

// Every command a router answers.
export const routerCommands: readonly RouterCommand[] = [
  clusterHelloCommand, clusterPingCommand, clusterHostInfoCommand, clusterGetCmdLineOptsCommand, isDbGridCommand, clusterBuildInfoCommand, clusterWhatsMyUriCommand, clusterConnPoolStatsCommand, clusterConnectionStatusCommand,
  clusterGetParameterCommand, clusterSetParameterCommand, clusterGetLogCommand, clusterProfileCommand, clusterServerStatusCommand, clusterListCommandsCommand, ...clusterSessionCommands,
  addShardCommand, listShardsCommand, enableShardingCommand, getShardVersionCommand, shardCollectionCommand, refineCollectionShardKeyCommand, splitCommand, mergeChunksCommand,
  ...balancerRouterCommands, flushRouterConfigCommand, moveChunkCommand, moveRangeCommand, removeShardCommand, movePrimaryCommand,
  clusterFindCommand, clusterGetMoreCommand, clusterKillCursorsCommand, clusterCountCommand, clusterDistinctCommand, clusterMapReduceCommand,
  withClusterSourceStages(clusterAggregateCommand), clusterInsertCommand, clusterUpdateCommand, clusterDeleteCommand, clusterFindAndModifyCommand,
  clusterCreateCommand, clusterDropCommand, clusterDropDatabaseCommand, clusterCreateIndexesCommand, clusterDropIndexesCommand, clusterCollModCommand,
  clusterListIndexesCommand, clusterListCollectionsCommand, clusterListDatabasesCommand, clusterRenameCollectionCommand, clusterValidateCommand, clusterDataSizeCommand, clusterCurrentOpCommand, clusterCollStatsCommand, clusterDbStatsCommand,
  clusterExplainCommand, ...zoneRouterCommands, clusterCommitTransactionCommand, clusterAbortTransactionCommand,
  clusterKillOpCommand, checkMetadataConsistencyCommand, configureQueryAnalyzerCommand, analyzeShardKeyCommand, ...reshardRouterCommands, ...moveCollectionRouterCommands,
  clusterSaslStartCommand, clusterSaslContinueCommand, clusterCreateUserCommand, ...clusterUserCommands,
];
