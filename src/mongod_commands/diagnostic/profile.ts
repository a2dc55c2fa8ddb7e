import { slowOperationSettingsOf } from '../../metrics/slow_operations.js';
import type { CommandDefinition } from '../command.js';
import { runProfile } from '../../command_layer/profile_settings.js';

export const profileCommand: CommandDefinition = {
  names: ['profile'],
  run: (ctx, cmd) => runProfile(slowOperationSettingsOf(ctx.node), cmd, 'node', (from, to) => {
    ctx.node.logger.info({ c: 'COMMAND', id: 48742, from, to }, 'Profiler settings changed');
  }),
};
