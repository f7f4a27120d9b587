/**
 * The webhook check on the sample delivery of docs/webhooks.md ("What a delivery looks like"): the
 * genuine one passes (checked at the moment it was signed), the same body with one byte changed
 * and the genuine one a day later are refused. Needs no stack.
 */
import { verifyWebhook, WebhookVerificationError } from "@phoneid/server";

import { check, run } from "./config.js";

const SECRET = "whsec_vG7CCO2e50IlrHuoZj-V13Kcv6jI25_Lh5BYY_Qr5Vg";
const BODY =
  '{"events":[{"eventId":"58a4baba-360d-4da1-b2b7-10a14830a3b8","eventType":"SIM_SWAP",' +
  '"description":"The number\'s SIM card changed.","phoneNumber":"+12025550143",' +
  '"serviceId":"72beb529-42d4-49fd-9621-f2a2e08ecbeb","clientCustomerId":"cust-1",' +
  '"occurredAt":"2026-05-01T10:00:00Z","sentAt":"2026-11-23T09:46:50Z"}]}';
// As Node's http server hands them over: names in lower case.
const HEADERS = {
  "content-type": "application/json",
  "phoneid-event-id": "58a4baba-360d-4da1-b2b7-10a14830a3b8",
  "phoneid-timestamp": "1795427210",
  "phoneid-signature": "v1=6e7424701a1d07b3e0dc08443e7dc3168485e6008f020562062ac8fb496d3268",
};
const SIGNED_AT_MS = 1795427210 * 1000;

function refused(what: string, attempt: () => unknown): void {
  try {
    attempt();
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    console.log(`${what}: refused (${error.message})`);
    return;
  }
  throw new Error(`${what} was accepted`);
}

run(async () => {
  const events = verifyWebhook(SECRET, HEADERS, Buffer.from(BODY), { clock: () => SIGNED_AT_MS });
  for (const event of events) {
    console.log(`genuine delivery: ${event.eventType} for ${event.serviceId} (event ${event.eventId})`);
  }
  check(events.length === 1, "the sample holds one event");
  refused("tampered body", () =>
    verifyWebhook(SECRET, HEADERS, BODY.replace("+12025550143", "+12025550144"), { clock: () => SIGNED_AT_MS }),
  );
  refused("a day later", () => verifyWebhook(SECRET, HEADERS, BODY, { clock: () => SIGNED_AT_MS + 86_400_000 }));
});
