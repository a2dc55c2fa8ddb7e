import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName } from '../../bson/compare.js';
import { isNumber, toDouble } from '../../bson/values.js';
import { operationsInFlightOf } from '../../command_layer/operations_in_flight.js';
import type { RouterCommand } from '../router_services.js';

// killOp of one of the router's own operations (an opid from `$currentOp: {localOps: true}`), as
// mongos answers it: "attempting to kill op" whether or not it was still running. mongos also
// passes "shard:opid" on to a shard; docshard's nodes have no killOp, so that form is refused.
export const clusterKillOpCommand: RouterCommand = {
  names: ['killOp'],
  adminOnly: true,
  run(ctx, cmd) {
    const op = cmd.op;
    if (op === undefined) throw new MongoError(ErrorCodes.BadValue, "Did not provide \"op\" field");
    if (!isNumber(op)) {
      if (typeof op === 'string') throw new MongoError(ErrorCodes.IllegalOperation, `cannot kill ${op}: docshard's shards do not kill operations`);
      throw new MongoError(ErrorCodes.TypeMismatch, `Invalid op type: ${bsonTypeName(op)}`);
    }
    operationsInFlightOf(ctx.router).kill(toDouble(op));
    return { info: 'attempting to kill op', ok: 1 };
  },
};
