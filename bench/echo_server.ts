// A bare TCP ping-pong peer for the node benchmark: answers each length-prefixed message with a
// reply of a fixed size, doing no other work, so the difference to docshard is docshard's cost.
import net from 'node:net';

const replySize = Number(process.argv[2] ?? '100');
const reply = Buffer.alloc(replySize);
reply.writeInt32LE(replySize, 0);

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  let buffer = Buffer.alloc(0);
  socket.on('data', (d) => {
    buffer = buffer.length === 0 ? d : Buffer.concat([buffer, d]);
    while (buffer.length >= 4 && buffer.length >= buffer.readInt32LE(0)) {
      const len = buffer.readInt32LE(0);
      reply.writeInt32LE(buffer.readInt32LE(4), 8);
      socket.write(reply);
      buffer = buffer.subarray(len);
    }
  });
  socket.on('error', () => undefined);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as net.AddressInfo).port}\n`);
});
