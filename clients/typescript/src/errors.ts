/**
 * The API's errors as exceptions: every one a PhoneIdError carrying the HTTP status and the API's
 * numeric code and message (docs/api.md, Errors; each code's meaning and fix: docs/errors.md).
 * A subclass per way an integrator reacts: fix the request, fix the credentials, stop, look
 * elsewhere, wait, retry.
 */
import type { ErrorBody } from "./types.js";

export class PhoneIdError extends Error {
  override readonly name: string = "PhoneIdError";
  /** The HTTP status. */
  readonly status: number;
  /** The API's error code (8001, 8002, ...); undefined when the answer carried no error body. */
  readonly code: number | undefined;
  /** The `clientRequestId` the request sent, echoed. */
  readonly clientRequestId: string | undefined;
  /** The flow's correlationId, when the request named one. */
  readonly correlationId: string | undefined;
  /** With 8003 (a step out of order): the call to make. */
  readonly next: Record<string, string> | undefined;

  constructor(status: number, body: Partial<ErrorBody> | undefined, fallbackMessage: string) {
    super(body?.message ?? fallbackMessage);
    this.status = status;
    this.code = typeof body?.code === "number" ? body.code : undefined;
    this.clientRequestId = body?.clientRequestId ?? undefined;
    this.correlationId = body?.correlationId ?? undefined;
    this.next = body?.next ?? undefined;
  }
}

/** 400 (and 413): the request breaks a rule (8001), names no Sandbox user (8007), comes before its turn (8003) or too early (9100). Fix the request. */
export class BadRequestError extends PhoneIdError {
  override readonly name = "BadRequestError";
}

/** 401 (8002): the client credentials, or the access token even after a fresh one, were refused. */
export class AuthenticationError extends PhoneIdError {
  override readonly name = "AuthenticationError";
}

/** 403: not allowed: a replayed step (8003), a session unknown or expired (8008), another solution's test user (8009), a country not served (8010), a revoked device (8019). */
export class PermissionDeniedError extends PhoneIdError {
  override readonly name = "PermissionDeniedError";
}

/** 404 (8011): no identity or device key of this client has the id. */
export class NotFoundError extends PhoneIdError {
  override readonly name = "NotFoundError";
}

/** 409 (8020, the request under this Idempotency-Key is still running) or 422 (8021, the key was used for another request). */
export class IdempotencyError extends PhoneIdError {
  override readonly name = "IdempotencyError";
}

/** 429 (8018): wait `retryAfter` seconds before the next request. */
export class RateLimitError extends PhoneIdError {
  override readonly name = "RateLimitError";
  /** The `Retry-After` header in seconds, when the answer had one. */
  readonly retryAfter: number | undefined;

  constructor(status: number, body: Partial<ErrorBody> | undefined, fallback: string, retryAfter?: number) {
    super(status, body, fallback);
    this.retryAfter = retryAfter;
  }
}

/** 5xx (8000): retry; report the reference in the message if it persists. */
export class ServerError extends PhoneIdError {
  override readonly name = "ServerError";
}

/** The error an answer other than 2xx stands for, read from its body. */
export async function errorOf(response: Response): Promise<PhoneIdError> {
  const text = await response.text();
  let body: Partial<ErrorBody> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      body = parsed as Partial<ErrorBody>;
    }
  } catch {
    body = undefined; // not the API's error body (a proxy's page): the status still tells
  }
  const status = response.status;
  const fallback = `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ""}`;
  if (status === 400 || status === 413) return new BadRequestError(status, body, fallback);
  if (status === 401) return new AuthenticationError(status, body, fallback);
  if (status === 403) return new PermissionDeniedError(status, body, fallback);
  if (status === 404) return new NotFoundError(status, body, fallback);
  if (status === 409 || status === 422) return new IdempotencyError(status, body, fallback);
  if (status === 429) {
    const retryAfter = Number(response.headers.get("retry-after") ?? Number.NaN);
    return new RateLimitError(status, body, fallback, Number.isFinite(retryAfter) ? retryAfter : undefined);
  }
  if (status >= 500) return new ServerError(status, body, fallback);
  return new PhoneIdError(status, body, fallback);
}
