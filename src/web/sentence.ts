// A message read as a sentence on a page: its first letter capitalised, unless it starts with an
// identifier (an event type, a field or scope name, a custom field's cf:id), whose case is its meaning:
// "Customer.created needs CUSTOMERS_READ" named an event type that does not exist.

/** A plain lowercase word, then a space, a comma, a semicolon, a colon and a space, or the end. */
const PLAIN_FIRST_WORD = /^[a-z]+(?=$|[\s,;]|:\s)/;

export function sentenceStart(text: string): string {
  return PLAIN_FIRST_WORD.test(text) ? `${text.charAt(0).toUpperCase()}${text.slice(1)}` : text;
}
