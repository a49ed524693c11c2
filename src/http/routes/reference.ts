// The human-readable API reference: Swagger UI (from the swagger-ui-dist package, served by Couvert
// itself, never from a CDN) rendering the served openapi.json. Outside /api/partner/v1 so that opening
// the page and its assets spends none of a partner's rate-limit budget (the document it loads does,
// once). Hidden from openapi.json: the page is not part of the API it describes.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ApiError } from '../../core/errors';
import { type AnyRoute, defineRoute, PUBLIC } from '../route';
import { obj, str } from '../schema';

export const REFERENCE_PATH = '/docs';

/**
 * Nothing but our own origin: scripts and styles are files (no inline code), the document is fetched
 * from here, and the only images are our favicon and the data: URIs of Swagger UI's icons.
 */
export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer | null;
  etag: string;
  /** The page is revalidated on every visit; the assets for a day. */
  cacheControl: string;
}

const here = join(import.meta.dirname, '..', 'reference');
const swaggerDir = () => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** Where each served file comes from; nothing outside this list is readable through the route. */
const SOURCES: Record<string, { file: () => string; type: string }> = {
  'swagger-ui-bundle.js': {
    file: () => join(swaggerDir(), 'swagger-ui-bundle.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'swagger-ui.css': { file: () => join(swaggerDir(), 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'favicon-32x32.png': { file: () => join(swaggerDir(), 'favicon-32x32.png'), type: 'image/png' },
  'reference.js': { file: () => join(here, 'reference.js'), type: 'text/javascript; charset=utf-8' },
  'reference.css': { file: () => join(here, 'reference.css'), type: 'text/css; charset=utf-8' },
};

const cache = new Map<string, Asset>();

function load(name: string, file: string, type: string, cacheControl: string): Asset {
  let asset = cache.get(name);
  if (!asset) {
    let body = readFileSync(file);
    // The source maps are not served: drop the comments that would make devtools ask for them.
    if (type.startsWith('text/'))
      body = Buffer.from(
        body.toString('utf8').replace(/\n?\/[/*]# sourceMappingURL=\S+(\s*\*\/)?\s*$/, '\n'),
      );
    const compressible = type.startsWith('text/') && body.length > 1024;
    asset = {
      type,
      body,
      gzip: compressible ? gzipSync(body) : null,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      cacheControl,
    };
    cache.set(name, asset);
  }
  return asset;
}

function serve(asset: Asset, ifNoneMatch: string, acceptEncoding: string) {
  const headers: Record<string, string> = {
    'content-type': asset.type,
    'cache-control': asset.cacheControl,
    etag: asset.etag,
    'content-security-policy': REFERENCE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    ...(asset.gzip ? { vary: 'accept-encoding' } : {}),
  };
  if (ifNoneMatch.split(/\s*,\s*/).includes(asset.etag)) return { status: 304, headers };
  if (asset.gzip && /\bgzip\b/.test(acceptEncoding))
    return { headers: { ...headers, 'content-encoding': 'gzip' }, body: asset.gzip };
  return { headers, body: asset.body };
}

export const referenceRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: REFERENCE_PATH,
    absolute: true,
    hidden: true,
    operationId: 'getReference',
    summary: 'The API reference (HTML)',
    tag: 'Meta',
    access: PUBLIC,
    responses: { 200: { description: 'An HTML page rendering openapi.json' } },
    handler: ({ ctx }) =>
      serve(
        load('page', join(here, 'page.html'), 'text/html; charset=utf-8', 'no-cache'),
        ctx.get('if-none-match'),
        ctx.get('accept-encoding'),
      ),
  }),
  defineRoute({
    method: 'GET',
    path: `${REFERENCE_PATH}/assets/{file}`,
    absolute: true,
    hidden: true,
    operationId: 'getReferenceAsset',
    summary: 'A script, style sheet or image of the API reference',
    tag: 'Meta',
    access: PUBLIC,
    params: obj({ file: str({ min: 1, max: 64, pattern: /^[A-Za-z0-9._-]+$/ }) }),
    responses: { 200: { description: 'The file' } },
    errors: [404],
    handler: ({ params, ctx }) => {
      const source = Object.hasOwn(SOURCES, params.file) ? SOURCES[params.file] : undefined;
      if (!source)
        throw new ApiError(404, 'RESOURCE_NOT_FOUND', `${REFERENCE_PATH}/assets has no ${params.file}`);
      const asset = load(params.file, source.file(), source.type, 'public, max-age=86400');
      return serve(asset, ctx.get('if-none-match'), ctx.get('accept-encoding'));
    },
  }),
];
