/**
 * A DATA_DIR this process makes is its owner's only (0700, whatever the umask): it holds the key store
 * (every customer's key, in clear), the sealed log and the secrets key, and SQLite creates its files
 * with the umask's modes (0644), so a directory others may enter would let any local account read
 * everyone's personal data. A directory that already exists keeps the modes its operator gave it.
 */
export const DATA_DIR_MODE = 0o700;
