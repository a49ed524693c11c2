// Connection strings (EVENTSTORE_URL, MONGODB_URL) may carry a password in their user info
// (`scheme://user:password@host…`): a message naming one shows the user and hides the password.

/** The text with the password of every `scheme://user:password@` replaced by `***`. */
export const withoutPassword = (text: string): string =>
  text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*):[^@/?#\s]*@/gi, '$1:***@');
