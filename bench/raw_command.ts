import net from 'node:net';
import { BSON } from 'bson';
import type { AnyDoc } from '../test/helpers/spawn_node.js';

// One OP_MSG command on a raw socket: the driver's own monitoring (its heartbeats, its wait before
// checking a server again) stays out of a failover's figure, which is the servers'.
export function rawCommand(port: number, body: AnyDoc, timeoutMs: number): Promise<AnyDoc> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(BSON.serialize(body));
    const msg = Buffer.alloc(21 + payload.length);
    msg.writeInt32LE(msg.length, 0);
    msg.writeInt32LE(1, 4);
    msg.writeInt32LE(2013, 12);
    payload.copy(msg, 21);
    const socket = net.connect(port, '127.0.0.1', () => socket.write(msg));
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('timeout')); }, timeoutMs);
    let buffer = Buffer.alloc(0);
    socket.on('data', (d) => {
      buffer = Buffer.concat([buffer, d]);
      if (buffer.length >= 4 && buffer.length >= buffer.readInt32LE(0)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(BSON.deserialize(buffer.subarray(21, buffer.readInt32LE(0))));
      }
    });
    socket.on('error', (err) => { clearTimeout(timer); reject(err); });
  });
}
