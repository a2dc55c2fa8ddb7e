import { checkReceivedDepth } from '../bson/bson_depth.js';
import { deserializeDocument, isPlainObject, type Doc } from '../bson/values.js';
import type { MessageHandler } from '../command_layer/message_handler.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import type { ChunkManager } from '../router/chunk_manager.js';
import type { RouterServices } from '../router/router_services.js';
import { chunkForInsert, chunksForQuery } from '../router/targeter.js';
import { parseRequest } from '../wire/message.js';
import { keyRangeHeatOf, type KeyRangeHeat } from './key_range_heat.js';

// What feeds the heat map: while a console is open, each request the router receives is targeted
// again with the router's own targeting (targeter.ts) on its cached routing table, before it is
// handled, and counted against the chunks it reads or writes. A request is decoded for this only
// while someone watches; otherwise the wrapper costs one flag test.

// A read without a shard key reaches every chunk; counting more than this many would cost more
// than it shows.
const MAX_CHUNKS_PER_REQUEST = 4096;

export function withHeatTracking(router: RouterServices, handler: MessageHandler): MessageHandler {
  const heat = keyRangeHeatOf(router);
  return (conn, message) => {
    if (heat.active) noteRequest(heat, router, message);
    return handler(conn, message);
  };
}

function noteRequest(heat: KeyRangeHeat, router: RouterServices, message: Buffer): void {
  try {
    const request = parseRequest(message);
    if (request.kind !== 'msg') return;
    // The handler refuses a message nested too deep; the bytes must not reach the decoder first.
    checkReceivedDepth(request.body);
    for (const sequence of request.sequences) for (const doc of sequence.documents) checkReceivedDepth(doc);
    const cmd = deserializeDocument(request.body);
    const name = Object.keys(cmd)[0];
    const coll = name === undefined ? undefined : cmd[name];
    if (typeof coll !== 'string' || typeof cmd.$db !== 'string') return;
    const cm = router.catalogCache.peekRouting(`${cmd.$db}.${coll}`)?.cm;
    if (cm === undefined) return;
    const documents = (field: string): Doc[] => {
      const sequence = request.sequences.find((s) => s.identifier === field);
      if (sequence !== undefined) return sequence.documents.map((d) => deserializeDocument(d));
      return Array.isArray(cmd[field]) ? (cmd[field] as unknown[]).filter(isPlainObject) : [];
    };
    const now = router.wallClock.now();
    const note = (chunks: ChunkType[], kind: 'read' | 'write') => {
      if (chunks.length > 0) heat.note(cm, chunks, kind, now);
    };
    switch (name) {
      case 'insert': note(documents('documents').map((d) => chunkForInsert(cm, d)), 'write'); break;
      case 'update': note(documents('updates').flatMap((u) => filterChunks(cm, u.q)), 'write'); break;
      case 'delete': note(documents('deletes').flatMap((d) => filterChunks(cm, d.q)), 'write'); break;
      case 'findAndModify': case 'findandmodify': note(filterChunks(cm, cmd.query), 'write'); break;
      case 'find': note(filterChunks(cm, cmd.filter), 'read'); break;
      case 'count': case 'distinct': note(filterChunks(cm, cmd.query), 'read'); break;
      case 'aggregate': {
        const first = Array.isArray(cmd.pipeline) ? cmd.pipeline[0] : undefined;
        note(filterChunks(cm, isPlainObject(first) ? first.$match : undefined), 'read');
        break;
      }
      default: break;
    }
  } catch {
    // A request the router itself will refuse: nothing to count.
  }
}

function filterChunks(cm: ChunkManager, filter: unknown): ChunkType[] {
  return chunksForQuery(cm, isPlainObject(filter) ? filter : {}, MAX_CHUNKS_PER_REQUEST);
}
