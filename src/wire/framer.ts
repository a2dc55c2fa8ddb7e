import { FramingError } from './message.js';
import { HEADER_SIZE, Limits } from './op_codes.js';

// Splits a TCP byte stream into whole messages. Lengths outside [header, maxLength] make the
// stream unreadable, so they are framing errors (the connection is closed); a length is judged from
// its header, before the message's bytes are waited for.
export class MessageFramer {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(chunk: Buffer, maxLength: number = Limits.maxMessageSizeBytes): Buffer[] {
    // Most reads carry exactly one request: no copies, no slices.
    if (this.buffered === 0 && chunk.length >= HEADER_SIZE && chunk.readInt32LE(0) === chunk.length && chunk.length <= maxLength) {
      return [chunk];
    }
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const messages: Buffer[] = [];
    while (this.buffered >= 4) {
      const head = this.peek(4);
      const length = head.readInt32LE(0);
      if (length < HEADER_SIZE || length > maxLength) {
        throw new FramingError(`invalid message length ${length}`);
      }
      if (this.buffered < length) break;
      messages.push(this.take(length));
    }
    return messages;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const message = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return message;
  }
}
