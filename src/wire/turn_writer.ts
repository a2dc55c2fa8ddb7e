import type net from 'node:net';

// The first message of an event-loop turn is written at once; the rest wait for the turn's check
// phase, after every connection that had data in this turn has been handled, and go out
// together. Written one by one as they complete, nearly every message pays for waking a peer
// that has gone idle waiting for it; written together, the first wakes it and the rest find it
// awake. While turns carry a single message (one busy connection), marking the end of each turn
// is pure cost, so messages are then written at once for a while before the next turn is looked
// at. The server writes its replies this way, and a node's or router's client its requests.
const DIRECT_WRITES_AFTER_LONE_TURN = 32;

export class TurnWriter {
  private pending: { socket: net.Socket; message: Buffer }[] = [];
  private turnMarked = false;
  private directWrites = 0;

  add(socket: net.Socket, message: Buffer): void {
    if (this.turnMarked) {
      this.pending.push({ socket, message });
      return;
    }
    socket.write(message);
    if (this.directWrites > 0) {
      this.directWrites -= 1;
      return;
    }
    this.turnMarked = true;
    setImmediate(this.endTurn);
  }

  private readonly endTurn = (): void => {
    this.turnMarked = false;
    const pending = this.pending;
    if (pending.length === 0) {
      this.directWrites = DIRECT_WRITES_AFTER_LONE_TURN;
      return;
    }
    this.pending = [];
    for (const { socket, message } of pending) if (!socket.destroyed) socket.write(message);
  };
}
