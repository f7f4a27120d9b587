import assert from "node:assert/strict";
import { test } from "node:test";

import { verifyWebhook, WebhookVerificationError } from "@phoneid/server";

// The delivery of docs/webhooks.md ("What a delivery looks like"): an exact test vector.
const SECRET = "whsec_vG7CCO2e50IlrHuoZj-V13Kcv6jI25_Lh5BYY_Qr5Vg";
const BODY =
  '{"events":[{"eventId":"58a4baba-360d-4da1-b2b7-10a14830a3b8","eventType":"SIM_SWAP",' +
  '"description":"The number\'s SIM card changed.","phoneNumber":"+12025550143",' +
  '"serviceId":"72beb529-42d4-49fd-9621-f2a2e08ecbeb","clientCustomerId":"cust-1",' +
  '"occurredAt":"2026-05-01T10:00:00Z","sentAt":"2026-11-23T09:46:50Z"}]}';
const TIMESTAMP = "1795427210";
const SIGNATURE = "v1=6e7424701a1d07b3e0dc08443e7dc3168485e6008f020562062ac8fb496d3268";
const HEADERS = { "phoneid-timestamp": TIMESTAMP, "phoneid-signature": SIGNATURE };
const AT_SIGNING = { clock: () => Number(TIMESTAMP) * 1000 };

test("a genuine delivery gives its events", () => {
  const events = verifyWebhook(SECRET, HEADERS, Buffer.from(BODY), AT_SIGNING);
  assert.deepEqual(events.map((event) => [event.eventType, event.serviceId]), [
    ["SIM_SWAP", "72beb529-42d4-49fd-9621-f2a2e08ecbeb"],
  ]);
});

test("header names in any case are found", () => {
  const shouting = { "PHONEID-TIMESTAMP": TIMESTAMP, "PhoneID-Signature": SIGNATURE };
  assert.equal(verifyWebhook(SECRET, shouting, BODY, AT_SIGNING).length, 1);
  const fetched = new Headers({ "PhoneID-Timestamp": TIMESTAMP, "PHONEID-SIGNATURE": SIGNATURE });
  assert.equal(verifyWebhook(SECRET, fetched, BODY, AT_SIGNING).length, 1);
});

test("a tampered body, another secret or a missing signature is refused", () => {
  const tampered = BODY.replace("SIM_SWAP", "PORT");
  assert.throws(() => verifyWebhook(SECRET, HEADERS, tampered, AT_SIGNING), WebhookVerificationError);
  assert.throws(() => verifyWebhook(`${SECRET}x`, HEADERS, BODY, AT_SIGNING), WebhookVerificationError);
  assert.throws(() => verifyWebhook(SECRET, { "phoneid-timestamp": TIMESTAMP }, BODY, AT_SIGNING), /signature does not match/);
  const shifted = { ...HEADERS, "phoneid-timestamp": String(Number(TIMESTAMP) + 1) };
  assert.throws(() => verifyWebhook(SECRET, shifted, BODY, AT_SIGNING), /signature does not match/);
});

test("a delivery older or newer than the tolerance is refused", () => {
  const signedAt = Number(TIMESTAMP) * 1000;
  assert.equal(verifyWebhook(SECRET, HEADERS, BODY, { clock: () => signedAt + 300_000 }).length, 1);
  assert.throws(() => verifyWebhook(SECRET, HEADERS, BODY, { clock: () => signedAt + 301_000 }), /stale delivery/);
  assert.throws(() => verifyWebhook(SECRET, HEADERS, BODY, { clock: () => signedAt - 301_000 }), /stale delivery/);
  assert.equal(verifyWebhook(SECRET, HEADERS, BODY, { clock: () => signedAt + 599_000, toleranceSeconds: 600 }).length, 1);
});
