import type { Context } from 'koa';
import { ApiError, type ErrorCode } from '../core/errors';
import { DuplicateKeyError } from '../ports/document-store';
import { WrongExpectedRevisionError } from '../ports/event-store';
import { CatchUpStopped } from '../projection/runner';

export interface ErrorBody {
  error: { code: ErrorCode; message: string; request_id: string; details?: Record<string, unknown> };
}

/** Maps anything thrown to the spec's envelope. Unknown errors become 500 without internals. */
export function toErrorResponse(
  err: unknown,
  requestId: string,
): { status: number; body: ErrorBody; headers: Record<string, string> } {
  if (err instanceof ApiError) {
    return {
      status: err.status,
      headers: err.headers ?? {},
      body: {
        error: {
          code: err.code,
          message: err.message,
          request_id: requestId,
          ...(err.details ? { details: err.details } : {}),
        },
      },
    };
  }
  // A write that kept losing optimistic-concurrency races, or a duplicate in a unique read model.
  if (err instanceof WrongExpectedRevisionError || err instanceof DuplicateKeyError) {
    return {
      status: 409,
      headers: {},
      body: {
        error: {
          code: 'RESOURCE_CONFLICT',
          message: 'A concurrent change conflicted with this request; retry',
          request_id: requestId,
        },
      },
    };
  }
  // The process is stopping (runner.stop() after the drain's grace): a request still waiting for the
  // read models to catch up will not see them; another instance, or this one restarted, can answer.
  // INTERNAL_ERROR is the spec's closest code, as for a full disk; its write may have been stored.
  if (err instanceof CatchUpStopped) {
    return {
      status: 503,
      headers: { 'retry-after': '1' },
      body: {
        error: {
          code: 'INTERNAL_ERROR',
          message:
            'The service is shutting down: this request could not be completed. Retry shortly; before retrying a write, check whether it succeeded.',
          request_id: requestId,
          details: { reason: 'SHUTTING_DOWN' },
        },
      },
    };
  }
  return {
    status: 500,
    headers: {},
    body: {
      error: {
        code: 'INTERNAL_ERROR',
        message:
          'An unexpected error occurred. Keep the request_id; before retrying a write, check whether it succeeded.',
        request_id: requestId,
      },
    },
  };
}

export function sendError(ctx: Context, err: unknown, requestId: string): void {
  const r = toErrorResponse(err, requestId);
  ctx.status = r.status;
  for (const [k, v] of Object.entries(r.headers)) ctx.set(k, v);
  ctx.body = r.body;
}
