// HSTS (RFC 6797) for a service published over https: a browser that saw the header once goes to the
// host over https only, so a manager typing the address, or following an http:// link, never reaches
// the sign-in page over plain http first, where an attacker on the network could answer in its place
// (SSL stripping) and read the password. A year, the host alone: includeSubDomains or preload would
// bind hosts this service does not know about. Over http a browser ignores the header, and a local
// server must not pin its host to https, so it is sent only when BASE_URL is https.

export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000';

/** Whether the service is published over https: BASE_URL's scheme (config writes it in small letters). */
export const publishedOverHttps = (baseUrl: string): boolean => baseUrl.startsWith('https:');

/** Whether answers carry Strict-Transport-Security: BASE_URL is https. */
export const sendsStrictTransportSecurity = publishedOverHttps;
