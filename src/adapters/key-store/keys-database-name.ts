// The scaled-out keys' database name, apart from the adapter: the CLI names it (backup's advice)
// without loading the MongoDB driver.

/**
 * The keys' database: the read models' name with `_keys`, within MongoDB's 63-byte limit: the name is
 * cut to its first 58 bytes, at a character boundary (a character cut in two would be decoded as
 * U+FFFD, 3 bytes, and the name would pass the limit: MongoDB refuses it and the service cannot start).
 */
export function keysDatabaseName(readModelsDb: string): string {
  let prefix = '';
  let bytes = 0;
  for (const ch of readModelsDb) {
    bytes += Buffer.byteLength(ch);
    if (bytes > 58) break;
    prefix += ch;
  }
  return `${prefix}_keys`;
}
