export { PhoneIdClient, VERSION } from "./client.js";
export type { ClientOptions, ReadOptions, RequestOptions, WriteOptions } from "./client.js";
export {
  AuthenticationError,
  IdempotencyError,
  NotFoundError,
  PermissionDeniedError,
  PhoneIdError,
  RateLimitError,
  ServerError,
  BadRequestError,
} from "./errors.js";
export { ROUTES, TOKEN_ROUTE } from "./routes.js";
export type { Route } from "./routes.js";
export type { Clock } from "./token.js";
export type * from "./types.js";
export { verifyWebhook, WebhookVerificationError } from "./webhooks.js";
export type { VerifyWebhookOptions, WebhookEvent, WebhookHeaders } from "./webhooks.js";
export type { components, paths } from "./schema.js";
