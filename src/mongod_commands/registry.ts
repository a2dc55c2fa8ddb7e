import type { CommandDefinition, ConfigServerServices, ShardServices } from './command.js';
import { helloCommand } from './diagnostic/hello.js';
import { buildInfoCommand } from './diagnostic/build_info.js';
import { getParameterCommand, setParameterCommand } from './diagnostic/get_parameter.js';
import { serverStatusCommand } from './diagnostic/server_status.js';
import { currentOpCommand } from './diagnostic/current_op.js';
import { profileCommand } from './diagnostic/profile.js';
import { cleanupOrphanedCommand } from './migration/cleanup_orphaned.js';
import { configureFailPointCommand, waitForFailPointCommand } from './diagnostic/configure_fail_point.js';
import {
  getCmdLineOptsCommand, getLogCommand, hostInfoCommand, listCommandsCommand, pingCommand, whatsMyUriCommand,
} from './diagnostic/simple.js';
import { saslContinueCommand, saslStartCommand } from './auth/sasl_commands.js';
import {
  connectionStatusCommand, createUserCommand, dropUserCommand, getUserCacheGenerationCommand, grantRolesToUserCommand, revokeRolesFromUserCommand,
  updateUserCommand, usersInfoCommand,
} from './auth/user_commands.js';
import {
  createRoleCommand, dropAllRolesFromDatabaseCommand, dropRoleCommand, grantPrivilegesToRoleCommand, grantRolesToRoleCommand,
  revokePrivilegesFromRoleCommand, revokeRolesFromRoleCommand, rolesInfoCommand, updateRoleCommand,
} from './auth/role_commands.js';
import { endSessionsCommand, killSessionsCommands, refreshSessionsCommand, startSessionCommand } from './sessions/session_commands.js';
import { insertCommand } from './crud/insert.js';
import { updateCommand } from './crud/update.js';
import { deleteCommand } from './crud/delete.js';
import { findAndModifyCommand } from './crud/find_and_modify.js';
import { retryableStatementExecutedCommand } from './crud/retryable_statement_executed.js';
import { findCommand, getMoreCommand, killCursorsCommand } from './crud/find.js';
import { countCommand } from './crud/count.js';
import { distinctCommand } from './crud/distinct.js';
import { aggregateCommand } from './crud/aggregate.js';
import { explainCommand } from './crud/explain.js';
import {
  createCommand, dropCommand, dropDatabaseCommand, listCollectionsCommand, listDatabasesCommand, renameCollectionCommand,
} from './ddl/collections.js';
import { createIndexesCommand, dropIndexesCommand, listIndexesCommand } from './ddl/indexes.js';
import { collStatsCommand, dbStatsCommand } from './ddl/coll_stats.js';
import { collModCommand } from './ddl/coll_mod.js';
import { validateCommand } from './ddl/validate_command.js';
import { splitVectorCommand } from './sharding/split_vector.js';
import { balancingShardCommands } from './sharding/balancing_commands.js';
import { checkMetadataConsistencyNodeCommands } from './sharding/check_metadata_consistency.js';
import { createCollectionParticipantCommand } from './sharding/create_collection_participant.js';
import { mapReduceCommand, mapReduceFinishCommand } from './crud/map_reduce.js';
import { ddlCoordinatorCommands } from './sharding/ddl_coordinator_commands.js';
import { ddlParticipantCommands } from './sharding/ddl_participant_commands.js';
import { reshardingRecipientCommands } from './sharding/resharding_recipient_commands.js';
import { reshardingConfigCommands } from './configsvr/resharding_commands.js';
import { donorCommands } from './migration/donor_commands.js';
import { movePrimaryShardCommands, shardsvrMovePrimaryCommand } from './sharding/move_primary_commands.js';
import { refusedOffShard } from './sharding/shard_only_refusals.js';
import { configServerCommands } from './configsvr/configsvr_commands.js';
import { balancerCommands } from './configsvr/balancer_commands.js';
import { zoneCommands } from './configsvr/zone_commands.js';
import { removeShardCommands } from './configsvr/remove_shard_commands.js';
import { recipientCommands } from './migration/recipient_commands.js';
import { abortTransactionCommand, commitTransactionCommand, coordinateCommitTransactionCommand, prepareTransactionCommand } from './transaction_commands.js';
import { addShardInternalCommand, flushDatabaseCacheUpdatesCommand, flushRoutingTableCacheUpdatesCommand } from './sharding/shard_commands.js';

import { replSetInitiateCommand } from './repl_set_initiate.js';
import { replSetGetConfigCommand } from './repl_set_get_config.js';
import { replSetGetStatusCommand } from './repl_set_get_status.js';
import { replSetHeartbeatCommand } from './repl_set_heartbeat.js';
import { replSetRequestVotesCommand } from './repl_set_request_votes.js';
import { replSetUpdatePositionCommand } from './repl_set_update_position.js';
import { replSetStepDownCommand } from './repl_set_step_down.js';
import { replSetFreezeCommand } from './repl_set_freeze.js';
import { replSetStepUpCommand } from './repl_set_step_up.js';
import { replSetGetRBIDCommand } from './repl_set_get_rbid.js';
import { replSetReconfigCommand } from './repl_set_reconfig.js';
import { replSetSyncFromCommand } from './repl_set_sync_from.js';

// The commands a node answers in either role.
const nodeCommands: readonly CommandDefinition[] = [
  helloCommand, buildInfoCommand, getParameterCommand, setParameterCommand, serverStatusCommand, configureFailPointCommand, waitForFailPointCommand,
  connectionStatusCommand, getCmdLineOptsCommand, getLogCommand, hostInfoCommand, listCommandsCommand, pingCommand, profileCommand, whatsMyUriCommand,
  saslStartCommand, saslContinueCommand, createUserCommand, dropUserCommand, usersInfoCommand, updateUserCommand, grantRolesToUserCommand,
  revokeRolesFromUserCommand, rolesInfoCommand, getUserCacheGenerationCommand, createRoleCommand, updateRoleCommand, dropRoleCommand,
  dropAllRolesFromDatabaseCommand, grantRolesToRoleCommand, revokeRolesFromRoleCommand, grantPrivilegesToRoleCommand, revokePrivilegesFromRoleCommand,
  startSessionCommand, refreshSessionsCommand, endSessionsCommand, ...killSessionsCommands,
  insertCommand, updateCommand, deleteCommand, findAndModifyCommand, retryableStatementExecutedCommand, findCommand, getMoreCommand, killCursorsCommand,
  countCommand, distinctCommand, aggregateCommand, explainCommand, mapReduceCommand, mapReduceFinishCommand,
  createCommand, dropCommand, dropDatabaseCommand, listCollectionsCommand, listDatabasesCommand, renameCollectionCommand,
  createIndexesCommand, dropIndexesCommand, listIndexesCommand, collStatsCommand, dbStatsCommand, collModCommand, validateCommand,
  addShardInternalCommand, flushRoutingTableCacheUpdatesCommand, flushDatabaseCacheUpdatesCommand, splitVectorCommand, ...balancingShardCommands,
  ...donorCommands, ...recipientCommands, currentOpCommand, cleanupOrphanedCommand,
  ...movePrimaryShardCommands, commitTransactionCommand, abortTransactionCommand, coordinateCommitTransactionCommand, prepareTransactionCommand, ...checkMetadataConsistencyNodeCommands,
  createCollectionParticipantCommand,
  replSetInitiateCommand, replSetGetConfigCommand, replSetGetStatusCommand, replSetHeartbeatCommand, replSetRequestVotesCommand,
  replSetUpdatePositionCommand, replSetStepDownCommand, replSetStepUpCommand, replSetFreezeCommand, replSetGetRBIDCommand, replSetReconfigCommand, replSetSyncFromCommand,
];

// A shard's: every node's, and its DDL coordinators' and participants' (and movePrimary's, which
// runs a coordinator).
export const shardCommands: readonly CommandDefinition<ShardServices>[] = [
  ...nodeCommands, shardsvrMovePrimaryCommand, ...ddlCoordinatorCommands, ...ddlParticipantCommands, ...reshardingRecipientCommands,
];

// A config server's: every node's, the _configsvr* commands and the balancer's, and a shard's own
// refused as a shard outside a cluster refuses them.
export const configServerCommandSet: readonly CommandDefinition<ConfigServerServices>[] = [
  ...nodeCommands,
  ...[shardsvrMovePrimaryCommand, ...ddlCoordinatorCommands].map((def) => refusedOffShard(def)),
  ...[...ddlParticipantCommands, ...reshardingRecipientCommands].map((def) => refusedOffShard(def, true)),
  ...configServerCommands, ...reshardingConfigCommands, ...balancerCommands, ...zoneCommands, ...removeShardCommands,
];
