import net from 'node:net';

// A supervisor (`docshard up`) hands each child one end of a pipe it never writes to, as its last
// file descriptor, and names it in this environment variable. The kernel closes the
// supervisor's end when it dies, however it dies (kill -9 included), so the child learns of it
// without polling and without a signal that nobody would be left to send.
const SUPERVISOR_FD_ENV = 'DOCSHARD_SUPERVISOR_FD';

// For spawn() in the supervisor: stdin ignored, stdout and stderr piped to it, then the pipe.
export function supervisedSpawnOptions(): { stdio: Array<'ignore' | 'pipe'>; env: NodeJS.ProcessEnv } {
  const stdio: Array<'ignore' | 'pipe'> = ['ignore', 'pipe', 'pipe', 'pipe'];
  return { stdio, env: { ...process.env, [SUPERVISOR_FD_ENV]: String(stdio.length - 1) } };
}

// In a child: calls onGone once, when the supervisor's end of the pipe closes. A process started
// by hand has no supervisor, and then nothing is watched.
export function watchSupervisorPipe(onGone: () => void): void {
  const fd = process.env[SUPERVISOR_FD_ENV];
  if (fd === undefined) return;
  // The supervisor reads stdout and stderr too: once it is gone a log line fails with EPIPE,
  // which unhandled would crash the clean shutdown half-way.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  let gone = false;
  const report = (): void => {
    if (gone) return;
    gone = true;
    onGone();
  };
  // An fd that is not open means the pipe is already gone, as far as this process can tell.
  let pipe: net.Socket;
  try {
    pipe = new net.Socket({ fd: Number(fd), readable: true, writable: false });
  } catch {
    queueMicrotask(report);
    return;
  }
  pipe.on('end', report);
  pipe.on('close', report);
  pipe.on('error', report);
  pipe.resume(); // 'end' comes only to a flowing stream
  pipe.unref(); // the server keeps the process alive, not the watch
}
