import type { CommandDefinition } from '../command.js';
import { buildInfoReply } from '../../command_layer/server_description.js';

export const buildInfoCommand: CommandDefinition = {
  names: ['buildInfo', 'buildinfo'],
  run: () => buildInfoReply(),
};
