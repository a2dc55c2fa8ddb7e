import { mongoError } from '../../base/errors.js';
import { bsonTag, isPlainObject, type Doc } from '../../bson/values.js';
import { checkTopLevelFieldName } from './apply_tree.js';

const DBREF_FIELDS = new Set(['$ref', '$id', '$db']);

// What MongoDB checks before storing an updated document: no '$'-prefixed top-level field
// (DBRef parts aside) unless the update was a pipeline, none anywhere inside an object _id,
// and an _id of a storable type.
export function validateForStorage(doc: Doc, allowTopLevelDollar: boolean): void {
  for (const key of Object.keys(doc)) {
    if (key === '_id') validateId(doc._id);
    else if (!allowTopLevelDollar && !DBREF_FIELDS.has(key)) checkTopLevelFieldName(key);
  }
}

function validateId(id: unknown): void {
  if (Array.isArray(id)) throw mongoError('InvalidIdField', "The '_id' value cannot be of type array");
  if (bsonTag(id) === 'BSONRegExp') throw mongoError('InvalidIdField', "The '_id' value cannot be of type regex");
  if (isPlainObject(id)) checkNoDollarFields(id);
}

function checkNoDollarFields(obj: Doc): void {
  for (const [key, value] of Object.entries(obj)) {
    if (!DBREF_FIELDS.has(key)) checkTopLevelFieldName(key);
    if (isPlainObject(value)) checkNoDollarFields(value);
  }
}
