// The one email rule of the API (customers, inline reservation customers, prescribers), shared by the
// HTTP schemas, the write side and the CSV import, and published in the OpenAPI document as
// `format: email` with this very pattern, so a partner's validator and the server give one verdict.
//
// The rule is the one the common `format: email` validators apply (Ajv's ajv-formats, and HTML's
// <input type="email"> with a dot required in the domain): an RFC 5322 dot-atom before the @ (ASCII
// letters, digits and !#$%&'*+/=?^_`{|}~- in dot-separated runs, no empty run) and a host name after it
// (ASCII labels of letters, digits and inner hyphens, at least two). An internationalised domain is
// written in its ASCII form (xn--…, what browsers submit); non-ASCII local parts, quoted local parts,
// address literals ([1.2.3.4]) and display forms (<a@b.fr>) are refused. Being ASCII, its 254-character
// limit is also RFC 5321's 254 octets. docs/customers.md says why this rule.

const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';

/** The pattern as the OpenAPI document states it (ECMA-262, no flags). */
export const EMAIL_PATTERN = `^${ATEXT}+(?:\\.${ATEXT}+)*@(?:${LABEL}\\.)+${LABEL}$`;
export const EMAIL = new RegExp(EMAIL_PATTERN);
export const EMAIL_MAX = 254;

export const EMAIL_RULE =
  "An ASCII address: dot-separated runs of letters, digits and !#$%&'*+/=?^_`{|}~- before the @, a host name with a dot after it (an internationalised domain in its xn-- form); at most 254 characters";

export const isEmail = (v: string): boolean => v.length <= EMAIL_MAX && EMAIL.test(v);

/**
 * An email address in a response: as it was written. Addresses written before this rule (2026-11-27) were
 * held only to one @, no whitespace and a dot after the @, and are returned as stored, so the response
 * schema does not claim `format: email` for them.
 */
export const STORED_EMAIL_DESCRIPTION =
  "As written. Every address written since 2026-11-27 follows the request bodies' rule (format email and its pattern); one stored earlier was held only to one @, no whitespace and a dot after it, and is returned as stored";
