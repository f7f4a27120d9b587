// The web SDK in a real browser, through the demo integrator, against the local stack.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startStack, waitForMessages } from "./stack.mjs";

const OTP_USER = "+12025550101"; // otp-pass: 1234 passes
const FALLBACK_USER = "+12025550105"; // mobile-auth-fail-otp-pass
const MOBILE_AUTH_USER = "+12025550103"; // mobile-auth-pass
const OTP_USER_DOB = "1984-03-14";

let stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

async function openDemo({ mobile, phone, dob = OTP_USER_DOB, retry = true }) {
  const page = await stack.page({ mobile });
  await page.goto(`${stack.url}/demo/`);
  await page.fill("#phone", phone);
  await page.fill("#dob", dob);
  await page.setChecked("#retry", retry);
  await page.click("#verify");
  return page;
}

async function statusText(page, expected) {
  await page.waitForFunction((text) => document.querySelector("#status").textContent.includes(text), expected, {
    timeout: 20_000,
  });
  return page.textContent("#status");
}

async function result(page) {
  await page.waitForSelector("#result:not([hidden])", { timeout: 20_000 });
  return JSON.parse(await page.textContent("#result"));
}

async function enterCode(page, code) {
  await page.waitForSelector("#otp:not([hidden])");
  await page.fill("#otp-code", code);
  await page.click("#otp-submit");
}

describe("mobile web (OTP)", () => {
  test("a wrong code, then the right one, verifies the phone", async () => {
    const page = await openDemo({ mobile: true, phone: OTP_USER });
    await waitForMessages(stack, OTP_USER, 1);

    await enterCode(page, "1111");
    await page.waitForFunction(() => document.querySelector("#otp-error").textContent.includes("not correct"));
    await enterCode(page, "1234");

    assert.match(await statusText(page, "Verified"), /Verified ✔/);
    const steps = await result(page);
    assert.equal(steps.validate.success, true);
    assert.equal(steps.validate.phoneNumber, OTP_USER);
    assert.equal(steps.complete.success, true);
  });

  test("resend texts a new code, which then verifies", async () => {
    const sent = (await stack.outbox(OTP_USER)).length;
    const page = await openDemo({ mobile: true, phone: OTP_USER });
    await waitForMessages(stack, OTP_USER, sent + 1);
    await page.waitForSelector("#otp:not([hidden])");

    await page.click("#otp-resend");
    await waitForMessages(stack, OTP_USER, sent + 2);
    await enterCode(page, "1234");

    assert.match(await statusText(page, "Verified"), /Verified ✔/);
  });

  test("after Mobile Auth fails, a changed number gets the code and is the one validated", async () => {
    const page = await openDemo({ mobile: true, phone: FALLBACK_USER });
    await waitForMessages(stack, FALLBACK_USER, 1); // Mobile Auth failed, the OTP fallback texted

    await page.waitForSelector("#otp:not([hidden])");
    await page.click("#otp-change");
    await page.waitForSelector("#number:not([hidden])");
    await page.fill("#new-phone", OTP_USER);
    const before = (await stack.outbox(OTP_USER)).length;
    await page.click("#number-submit");
    await waitForMessages(stack, OTP_USER, before + 1);
    await enterCode(page, "1234");

    const steps = await result(page);
    assert.equal(steps.validate.success, true);
    assert.equal(steps.validate.phoneNumber, OTP_USER);
  });

  test("a code entered after its 2 minutes is refused, and a new one works", async () => {
    const page = await openDemo({ mobile: true, phone: OTP_USER });
    await page.waitForSelector("#otp:not([hidden])");

    await stack.advanceClock(121);
    await enterCode(page, "1234");
    await page.waitForFunction(() => document.querySelector("#otp-error").textContent.includes("expired"));
    await page.click("#otp-resend");
    await enterCode(page, "1234");

    assert.match(await statusText(page, "Verified"), /Verified ✔/);
  });

  test("Mobile Auth passes with no input at all", async () => {
    const page = await openDemo({ mobile: true, phone: MOBILE_AUTH_USER, dob: "1991-07-23" });

    assert.match(await statusText(page, "Verified"), /Verified ✔/);
    assert.equal((await stack.outbox(MOBILE_AUTH_USER)).length, 0, "no SMS is sent when Mobile Auth passes");
  });
});

describe("desktop (Instant Link)", () => {
  test("opening the texted link on the phone finishes the desktop page over its WebSocket", async () => {
    const desktop = await openDemo({ mobile: false, phone: OTP_USER });
    const before = (await stack.outbox(OTP_USER)).length;
    await desktop.waitForSelector("#link:not([hidden])");
    const messages = await waitForMessages(stack, OTP_USER, before + 1);
    const link = messages.at(-1).text.match(/https?:\/\/\S+\/l\/[\w-]+/)[0];

    const phone = await stack.page({ mobile: true });
    await phone.goto(link);

    assert.equal(new URL(phone.url()).pathname, "/demo/verified.html");
    assert.match(await statusText(desktop, "Verified"), /Verified ✔/);

    // The link works once.
    const again = await (await stack.page({ mobile: true })).goto(link);
    assert.equal(again.status(), 410);
  });

  test("a link opened after its 3 minutes is refused and the desktop is not verified", async () => {
    const desktop = await openDemo({ mobile: false, phone: OTP_USER });
    const before = (await stack.outbox(OTP_USER)).length;
    await desktop.waitForSelector("#link:not([hidden])");
    const messages = await waitForMessages(stack, OTP_USER, before + 1);
    const link = messages.at(-1).text.match(/https?:\/\/\S+\/l\/[\w-]+/)[0];

    await stack.advanceClock(181);
    const opened = await (await stack.page({ mobile: true })).goto(link);

    assert.equal(opened.status(), 410);
    assert.match(await opened.text(), /expired/);
  });
});
