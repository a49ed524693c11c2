// The pages' static files (a stylesheet, an icon, the import progress page's script): served from src/web/assets, so the pages' CSP needs no
// 'unsafe-inline'. Outside /api/partner/v1: no rate-limit budget spent.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../../core/errors';
import { type AnyRoute, defineRoute, PUBLIC } from '../route';
import { obj, str } from '../schema';

const dir = join(import.meta.dirname, '..', '..', 'web', 'assets');
const FILES: Record<string, string> = {
  'couvert.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
  'import-progress.js': 'text/javascript; charset=utf-8',
};
const cache = new Map<string, { body: Buffer; etag: string }>();

export const webAssetRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/assets/{file}',
    absolute: true,
    hidden: true,
    operationId: 'getWebAsset',
    summary: 'A static file of the sign-in, consent and dashboard pages',
    tag: 'OAuth',
    access: PUBLIC,
    params: obj({ file: str({ min: 1, max: 64, pattern: /^[A-Za-z0-9._-]+$/ }) }),
    responses: { 200: { description: 'The file' } },
    errors: [404],
    handler: ({ params, ctx }) => {
      const type = Object.hasOwn(FILES, params.file) ? FILES[params.file] : undefined;
      if (!type) throw new ApiError(404, 'RESOURCE_NOT_FOUND', `/assets has no ${params.file}`);
      let asset = cache.get(params.file);
      if (!asset) {
        const body = readFileSync(join(dir, params.file));
        asset = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
        cache.set(params.file, asset);
      }
      const headers = {
        'content-type': type,
        'cache-control': 'public, max-age=3600',
        etag: asset.etag,
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      };
      if (
        ctx
          .get('if-none-match')
          .split(/\s*,\s*/)
          .includes(asset.etag)
      )
        return { status: 304, headers };
      return { headers, body: asset.body };
    },
  }),
];
