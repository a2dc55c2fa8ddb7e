// A bare TCP forwarding proxy for the router benchmark: every accepted connection gets its own
// connection to the target and bytes are piped both ways untouched. It is what one extra network
// hop through a Node process costs at the least (two more socket reads and writes per request,
// one more process scheduled on the same cores), without parsing, routing or re-encoding.
// Usage: tcp_proxy.ts <target port>; prints its own port on stdout once listening.
import net from 'node:net';

const targetPort = Number(process.argv[2]);
if (!Number.isInteger(targetPort) || targetPort <= 0) {
  process.stderr.write('usage: tcp_proxy.ts <target port>\n');
  process.exit(2);
}

const server = net.createServer((client) => {
  const upstream = net.connect(targetPort, '127.0.0.1');
  // Nagle would hold back the small replies and requests the benchmark is made of.
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  client.pipe(upstream);
  upstream.pipe(client);
  // Either side going away ends the pair; errors are expected when the benchmark disconnects.
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as net.AddressInfo).port}\n`);
});
