// MongoDB documents read back as they were stored. The driver's BSON decoder (bson 7, no option to
// turn it off) makes every sub-document whose $-prefixed keys are only `$ref`, `$id` (not null) and
// `$db` a DBRef instance: partner JSON shaped so (a reservation's metadata holding a JSON Schema's
// `$ref` and `$id`, webhook headers named so) came back as an object whose own fields are
// `collection`, `oid`, `db` and `fields`, its keys reordered (`$ref`, `$id`, `$db` first) and a `$ref`
// with exactly one dot split into `$ref` and `$db` (`a.b` read as `$ref: 'b', $db: 'a'`, replacing a
// `$db` given), where the embedded store gives back the plain object. The adapter reads the documents' bytes (the driver's
// `raw`) and decodes them here: a document without a `$ref` key anywhere (a byte search, nearly every
// one) is decoded as the driver would and handed back untouched; only one holding such a key is
// walked, and each object holding a `$ref` key is rebuilt with its stored keys, order, `$ref` and `$db`.
import { BSON, type DBRef, type Document } from 'mongodb';

// The driver's defaults (resolveBSONOptions, the cursor's utf8 validation): the store sets none.
const DECODE: BSON.DeserializeOptions = {
  promoteLongs: true,
  promoteValues: true,
  promoteBuffers: false,
  bsonRegExp: false,
  useBigInt64: false,
  validation: { utf8: true },
};

// "$ref" as a BSON element name ends with its NUL. The search may also find it inside a string or a
// binary: that document is then only walked for nothing.
const REF_NAME = Buffer.from('$ref\0', 'latin1');

/** A document's stored bytes (one the driver handed out with `raw`) as the plain object stored. */
export function decodeStored(bytes: Uint8Array): Document {
  const doc = BSON.deserialize(bytes, DECODE);
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.indexOf(REF_NAME) === -1) return doc;
  let root = revive(doc) as Document;
  for (const held of objectsHoldingRef(bytes)) root = restore(root, held);
  return root;
}

interface HoldingRef {
  /** Element names from the document's root to the object (array indexes as their decimal names). */
  path: string[];
  /** Its element names in stored order. */
  names: string[];
  /** Its `$ref` and `$db` as stored, when strings (the decoder rewrites both on a `$ref` with one dot). */
  strings: Map<string, string>;
}

const utf8 = new TextDecoder();

/** Every (sub-)document of `bytes` with a `$ref` element, deepest first. */
function objectsHoldingRef(bytes: Uint8Array): HoldingRef[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const int32 = (at: number) => view.getInt32(at, true);
  const nameEnd = (at: number) => {
    let end = at;
    while (bytes[end] !== 0) end++;
    return end;
  };
  const found: HoldingRef[] = [];
  const walk = (start: number, path: string[]): void => {
    const last = start + int32(start) - 1;
    const names: string[] = [];
    const strings = new Map<string, string>();
    let at = start + 4;
    while (at < last) {
      const type = bytes[at++];
      const end = nameEnd(at);
      const name = utf8.decode(bytes.subarray(at, end));
      names.push(name);
      at = end + 1;
      switch (type) {
        case 0x01: // double
        case 0x09: // date
        case 0x11: // timestamp
        case 0x12: // int64
          at += 8;
          break;
        case 0x02: // string
          if (name === '$ref' || name === '$db')
            strings.set(name, utf8.decode(bytes.subarray(at + 4, at + 4 + int32(at) - 1)));
          at += 4 + int32(at);
          break;
        case 0x0d: // code
        case 0x0e: // symbol
          at += 4 + int32(at);
          break;
        case 0x03: // document
        case 0x04: // array
          walk(at, [...path, name]);
          at += int32(at);
          break;
        case 0x05: // binary
          at += 5 + int32(at);
          break;
        case 0x06: // undefined
        case 0x0a: // null
        case 0x7f: // max key
        case 0xff: // min key
          break;
        case 0x07: // ObjectId
          at += 12;
          break;
        case 0x08: // boolean
          at += 1;
          break;
        case 0x0b: // regular expression: pattern and flags
          at = nameEnd(nameEnd(at) + 1) + 1;
          break;
        case 0x0c: // DBPointer
          at += 4 + int32(at) + 12;
          break;
        case 0x0f: // code with scope
          at += int32(at);
          break;
        case 0x10: // int32
          at += 4;
          break;
        case 0x13: // decimal128
          at += 16;
          break;
        default:
          // The decoder took these bytes already: a type it knows and this walk does not.
          throw new Error(`BSON element type ${type} not known to decodeStored`);
      }
    }
    if (names.includes('$ref')) found.push({ path, names, strings });
  };
  walk(0, []);
  return found;
}

/** `root` with the object at `held.path` rebuilt as stored (the root itself when the path is empty). */
function restore(root: Document, held: HoldingRef): Document {
  let parent: Record<string, unknown> | null = null;
  let value: unknown = root;
  for (const name of held.path) {
    parent = value as Record<string, unknown>;
    value = parent[name];
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return root;
  const read = value as Record<string, unknown>;
  const rebuilt: Record<string, unknown> = {};
  for (const name of held.names) assign(rebuilt, name, held.strings.get(name) ?? read[name]);
  if (parent === null) return rebuilt;
  const name = held.path[held.path.length - 1] as string;
  if (Array.isArray(parent)) parent[Number(name)] = rebuilt;
  else assign(parent, name, rebuilt);
  return root;
}

/** DBRef instances made plain objects again, in place (the decoded documents are this call's own). */
function revive(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  // By its BSON type, not instanceof: a second copy of the bson package has a DBRef class of its own.
  if ((value as { _bsontype?: unknown })._bsontype === 'DBRef') {
    const ref = value as DBRef;
    const plain: Record<string, unknown> = { $ref: ref.collection, $id: revive(ref.oid) };
    if (ref.db !== undefined) plain.$db = ref.db;
    const fields = ref.fields as Record<string, unknown>;
    for (const k of Object.keys(fields)) assign(plain, k, revive(fields[k]));
    return plain;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === 'object' && v !== null) value[i] = revive(v);
    }
    return value;
  }
  // Only the decoder's plain objects: its other values (Binary, ObjectId, Date…) hold no document.
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const record = value as Record<string, unknown>;
  for (const k of Object.keys(record)) {
    const v = record[k];
    if (typeof v === 'object' && v !== null) {
      const revived = revive(v);
      if (revived !== v) assign(record, k, revived);
    }
  }
  return value;
}

/** `target[key] = value`, as data even for `__proto__` (the decoder stores that key as its own). */
function assign(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}
