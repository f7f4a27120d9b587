// Unified authentication with device keys, in a real browser: WebCrypto keys kept in IndexedDB.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startStack, waitForMessages } from "./stack.mjs";

const OTP_USER = "+12025550101";
const FALLBACK_USER = "+12025550105"; // Mobile Auth fails, then the code 1234 passes

let stack;
let phone; // one phone: the same browser profile (IndexedDB) across visits
before(async () => {
  stack = await startStack();
  phone = await stack.page({ mobile: true });
});
after(async () => {
  await stack?.stop();
});

async function visit() {
  await phone.goto(`${stack.url}/demo/`);
  await phone.selectOption("#api", "unify");
  await phone.fill("#phone", OTP_USER);
  await phone.click("#verify");
  await phone.waitForFunction(
    () => /Verified|Not verified|Stopped/.test(document.querySelector("#status").textContent) ||
      !document.querySelector("#otp").hidden,
  );
}

async function enterCode(code) {
  await phone.waitForSelector("#otp:not([hidden])");
  await phone.fill("#otp-code", code);
  await phone.click("#otp-submit");
}

async function outcome() {
  await phone.waitForFunction(() => /Verified|Not verified|Stopped/.test(document.querySelector("#status").textContent));
  const status = await phone.textContent("#status");
  const visible = await phone.isVisible("#result");
  return { status, result: visible ? JSON.parse(await phone.textContent("#result")) : null };
}

test("first visit binds a key after OTP, the second uses it with no SMS, and a revoked key gives 8019", async () => {
  // First visit: full possession by OTP, then the SDK registers a key and unify-status binds it.
  await visit();
  await waitForMessages(stack, OTP_USER, 1);
  await enterCode("1234");
  const first = await outcome();
  assert.match(first.status, /Verified ✔/);
  const deviceId = first.result.unifyStatus.deviceId;
  assert.ok(deviceId, "a key was bound");
  const textsAfterFirst = (await stack.outbox(OTP_USER)).length;

  // Second visit: the stored key proves possession; no SMS, same key.
  await visit();
  const second = await outcome();
  assert.match(second.status, /Verified ✔/);
  assert.equal(second.result.unifyStatus.deviceId, deviceId);
  assert.equal((await stack.outbox(OTP_USER)).length, textsAfterFirst, "no SMS on the second visit");

  // The integrator revokes the key: the next visit surfaces 8019.
  await phone.click("#revoke");
  await phone.waitForFunction(() => document.querySelector("#status").textContent.includes("revoked"));
  await visit();
  const third = await outcome();
  assert.match(third.status, /8019/);

  // A fresh full flow re-binds a new key.
  await visit();
  await enterCode("1234");
  const fourth = await outcome();
  assert.match(fourth.status, /Verified ✔/);
  assert.ok(fourth.result.unifyStatus.deviceId);
  assert.notEqual(fourth.result.unifyStatus.deviceId, deviceId);
});

test("on a desktop browser the flow picked is the one run: mobile binds a key after the code, desktop texts a link", async () => {
  const desktop = await stack.page();
  await desktop.goto(`${stack.url}/demo/`);
  await desktop.waitForSelector("#verify:enabled");
  await desktop.selectOption("#api", "unify");
  await desktop.fill("#phone", FALLBACK_USER);
  await desktop.selectOption("#flow", "mobile");
  await desktop.click("#verify");

  // The mobile flow runs though this is no phone: Mobile Auth fails (and the page says so), the code follows
  const [code] = await waitForMessages(stack, FALLBACK_USER, 1);
  assert.doesNotMatch(code.text, /\/l\//, "a code, not an Instant Link");
  await desktop.waitForSelector("#otp:not([hidden])");
  await desktop.waitForFunction(() => document.querySelector("#status").textContent.includes("Mobile Auth"));
  assert.equal(
    await desktop.textContent("#status"),
    "Mobile Auth did not recognise this phone, so we texted you a code instead.",
  );
  await desktop.fill("#otp-code", "1234");
  await desktop.click("#otp-submit");
  await desktop.waitForFunction(() => /Verified|Not verified|Stopped/.test(document.querySelector("#status").textContent));
  assert.match(await desktop.textContent("#status"), /Verified ✔/);
  const bound = JSON.parse(await desktop.textContent("#result")).unifyStatus;
  assert.ok(bound.deviceId, "a key was bound on the desktop browser");

  // The desktop flow picked on the same page texts an Instant Link
  await desktop.selectOption("#flow", "desktop");
  await desktop.fill("#phone", OTP_USER);
  const before = (await stack.outbox(OTP_USER)).length;
  await desktop.click("#verify");
  const messages = await waitForMessages(stack, OTP_USER, before + 1);
  assert.match(messages.at(-1).text, /https?:\/\/\S+\/l\/[\w-]+/);
  await desktop.waitForSelector("#link:not([hidden])");
});
