/**
 * The check of a change-event delivery (docs/webhooks.md, "Verifying a delivery"): `v1=` and the
 * hex HMAC-SHA256 of `<PhoneID-Timestamp>.<raw body>` keyed with the whole secret, compared in
 * constant time, and a timestamp within the tolerance of the receiver's clock.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

import type { Clock } from "./token.js";

/** One change event (docs/webhooks.md, "What a delivery looks like"). Webhooks are calls PhoneID makes, so they are not in the OpenAPI document the other types come from. */
export interface WebhookEvent {
  eventId: string;
  eventType:
    | "SIM_SWAP"
    | "PORT"
    | "LINE_TYPE_CHANGE"
    | "PHONE_NUMBER_CHANGE"
    | "DISCONNECT"
    | "MOVED_OUT_OF_COVERAGE";
  description: string;
  phoneNumber: string;
  serviceId: string;
  clientCustomerId?: string;
  occurredAt: string;
  sentAt: string;
}

/** A request's headers as frameworks hand them over: a Headers object (fetch), Node's IncomingHttpHeaders, or a plain record in any case. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Seconds a delivery's timestamp may be from the clock: 300 (5 minutes) by default. */
  toleranceSeconds?: number;
  /** Milliseconds since the epoch (default: Date.now). */
  clock?: Clock;
}

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

/** The events of a genuine delivery; throws WebhookVerificationError for any other. `body` is the raw body, before any JSON parsing. */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): WebhookEvent[] {
  const timestamp = header(headers, "phoneid-timestamp");
  const given = header(headers, "phoneid-signature");
  const raw = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
  const expected = `v1=${createHmac("sha256", secret).update(`${timestamp}.`).update(raw).digest("hex")}`;
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(expected, "utf8");
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new WebhookVerificationError("signature does not match");
  }
  const now = (options.clock ?? Date.now)() / 1000;
  const tolerance = options.toleranceSeconds ?? 300;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError("stale delivery: the timestamp is outside the tolerance");
  }
  const parsed = JSON.parse(raw.toString("utf8")) as { events?: WebhookEvent[] };
  return parsed.events ?? [];
}

/** A header's value whatever the case of its name: HTTP header names are case-insensitive. */
function header(headers: WebhookHeaders, name: string): string {
  if (headers instanceof Headers) return headers.get(name) ?? "";
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return (Array.isArray(value) ? value[0] : value) ?? "";
  }
  return "";
}
