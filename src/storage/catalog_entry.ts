import type { Binary } from 'bson';
import type { Doc } from '../bson/values.js';

// The persisted schema of one collection in the node's catalog (MongoDB's durable catalog entry).
export interface IndexEntry {
  id: number;
  // The spec as listIndexes shows it: {v, key, name, unique?, sparse?, partialFilterExpression?, ...}.
  spec: Doc;
  multikey: boolean;
}

export interface CollectionEntry {
  ns: string;
  id: number;
  uuid: Binary;
  options: Doc;
  indexes: IndexEntry[];
}

export function splitNamespace(ns: string): { db: string; coll: string } {
  const dot = ns.indexOf('.');
  return { db: ns.slice(0, dot), coll: ns.slice(dot + 1) };
}
