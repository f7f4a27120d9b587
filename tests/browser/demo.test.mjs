// The web SDK in a real browser, through the demo integrator, against the local stack (Sandbox).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startStack, waitForMessages } from "./stack.mjs";

const OTP_USER = "+12025550101"; // otp-pass: 1234 passes
const OTP_FAIL_USER = "+12025550102"; // otp-fail: no code passes
const FALLBACK_USER = "+12025550105"; // mobile-auth-fail-otp-pass
const MOBILE_AUTH_USER = "+12025550103"; // mobile-auth-pass
const SIM_SWAP_USER = "+14045550135"; // fraud-signal: complete fails with 9135
const OTP_USER_DOB = "1984-03-14";
const TOKEN_ONLY_USER = "+12025550111"; // the longest description of the region

let stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

// The demo page, once it knows its stack (Verify is enabled then).
async function demoPage(on, { mobile = true } = {}) {
  const page = await on.page({ mobile });
  await page.goto(`${on.url}/demo/`);
  await page.waitForSelector("#verify:enabled");
  return page;
}

// Typing a test user's number fills the user's date of birth and name.
async function openDemo({ mobile, phone, dob, retry = true, flow }) {
  const page = await demoPage(stack, { mobile });
  await page.fill("#phone", phone);
  if (dob) await page.fill("#dob", dob);
  await page.setChecked("#retry", retry);
  if (flow) await page.selectOption("#flow", flow);
  await page.click("#verify");
  return page;
}

async function statusText(page, expected) {
  await page.waitForFunction((text) => document.querySelector("#status").textContent.includes(text), expected);
  return page.textContent("#status");
}

async function statusClass(page) {
  return page.getAttribute("#status", "class");
}

async function result(page) {
  await page.waitForSelector("#result:not([hidden])");
  return JSON.parse(await page.textContent("#result"));
}

async function enterCode(page, code) {
  await page.waitForSelector("#otp:not([hidden])");
  await page.fill("#otp-code", code);
  await page.click("#otp-submit");
}

// No horizontal scroll: the page is no wider than the screen.
async function fitsTheScreen(page) {
  return page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
}

async function textedLink(to, count) {
  const messages = await waitForMessages(stack, to, count);
  return messages.at(-1).text.match(/https?:\/\/\S+\/l\/[\w-]+/)[0];
}

describe("the page", () => {
  test("picking a Sandbox test user fills the number, date of birth and name", async () => {
    const page = await demoPage(stack);

    assert.match(await page.textContent("#stack"), /Sandbox tier, US region/);
    assert.equal(await page.isVisible("#user-picker"), true);
    assert.equal(await page.inputValue("#phone"), OTP_USER, "the region's first test user is prefilled");
    assert.equal(await page.inputValue("#dob"), OTP_USER_DOB);

    await page.selectOption("#user", SIM_SWAP_USER);
    assert.equal(await page.inputValue("#phone"), SIM_SWAP_USER);
    assert.equal(await page.inputValue("#dob"), "1986-05-17");
    assert.equal(await page.inputValue("#first-name"), "Quin");
    assert.equal(await page.inputValue("#last-name"), "Code9135");
    assert.match(await page.textContent(`#user option[value="${SIM_SWAP_USER}"]`), /SIM swap under 24 hours/);
    // The list cuts long entries at its width: the picked user's scenario is also shown whole.
    assert.equal(await page.textContent("#user-description"), "Raises 9135: Possible takeover: SIM swap under 24 hours");
    await page.selectOption("#user", TOKEN_ONLY_USER);
    assert.equal(
      await page.textContent("#user-description"),
      "Skips the client SDK: possession passes with no client, for curl testing of the call sequence",
    );
    assert.equal(await page.isVisible("#user-description"), true);
    assert.equal(await fitsTheScreen(page), true);

    // Typing a test user's number picks that user; another number drops the previous user's details.
    await page.fill("#phone", MOBILE_AUTH_USER);
    assert.equal(await page.inputValue("#user"), MOBILE_AUTH_USER);
    assert.equal(await page.inputValue("#first-name"), "Chloe");
    await page.fill("#phone", "+12025550199");
    assert.equal(await page.inputValue("#user"), "");
    assert.equal(await page.inputValue("#first-name"), "");
    assert.equal(await page.inputValue("#dob"), "");
  });

  test("a failed check lists the evaluation's reason codes and their meaning", async () => {
    const page = await demoPage(stack);
    await page.selectOption("#user", SIM_SWAP_USER);
    await page.click("#verify");

    assert.match(await statusText(page, "Not verified"), /Not verified ✘/);
    await page.waitForSelector("#reasons:not([hidden])");
    const reasons = await page.textContent("#reasons");
    assert.match(reasons, /9135/);
    assert.match(reasons, /Possible takeover: SIM swap under 24 hours/);
    assert.match(reasons, /authentication/);
    assert.equal(await fitsTheScreen(page), true);
  });
});

describe("mobile web (OTP)", () => {
  test("a wrong code says how many entries are left; Verify stays disabled until the check ends", async () => {
    const page = await openDemo({ mobile: true, phone: OTP_USER });
    await waitForMessages(stack, OTP_USER, 1);
    await page.waitForSelector("#otp:not([hidden])");
    assert.equal(await page.isDisabled("#verify"), true, "Verify is disabled while the check runs");
    // A second submit while the check runs starts no second flow.
    await page.evaluate(() => document.querySelector("#start").requestSubmit());

    await enterCode(page, "1111");
    assert.match(await statusText(page, "left"), /The code is not correct\. 2 code entries left\./);
    assert.equal(await statusClass(page), "failed");
    assert.equal(await fitsTheScreen(page), true);
    await enterCode(page, "1234");

    assert.match(await statusText(page, "Verified"), /Verified ✔/);
    const steps = await result(page);
    assert.equal(steps.validate.success, true);
    assert.equal(steps.validate.phoneNumber, OTP_USER);
    assert.equal(steps.complete.success, true);
    assert.equal(await page.isEnabled("#verify"), true, "Verify is enabled again once the check ended");
    assert.equal(await page.isHidden("#reasons"), true);
    assert.equal(await fitsTheScreen(page), true);
  });

  test("resend texts a new code, which then verifies", async () => {
    const sent = (await stack.outbox(OTP_USER)).length;
    const page = await openDemo({ mobile: true, phone: OTP_USER });
    await waitForMessages(stack, OTP_USER, sent + 1);
    await page.waitForSelector("#otp:not([hidden])");

    await page.click("#otp-resend");
    await waitForMessages(stack, OTP_USER, sent + 2);
    await statusText(page, "We texted you a new code");
    await enterCode(page, "1234");

    assert.match(await statusText(page, "Verified"), /Verified ✔/);
  });

  test("after Mobile Auth fails, a changed number gets the code, brings its own details and verifies", async () => {
    const page = await openDemo({ mobile: true, phone: FALLBACK_USER });
    await waitForMessages(stack, FALLBACK_USER, 1); // Mobile Auth failed, the OTP fallback texted

    await page.waitForSelector("#otp:not([hidden])");
    assert.equal(
      await statusText(page, "Mobile Auth"),
      "Mobile Auth did not recognise this phone, so we texted you a code instead.",
    );
    await page.click("#otp-change");
    await page.waitForSelector("#number:not([hidden])");
    await page.fill("#new-phone", OTP_USER);
    const before = (await stack.outbox(OTP_USER)).length;
    await page.click("#number-submit");
    await waitForMessages(stack, OTP_USER, before + 1);
    // The page now shows the new number's details, not the first number's
    assert.equal(await page.inputValue("#phone"), OTP_USER);
    assert.equal(await page.inputValue("#dob"), OTP_USER_DOB);
    assert.equal(await page.inputValue("#user"), OTP_USER);
    await enterCode(page, "1234");

    const steps = await result(page);
    assert.equal(steps.validate.success, true);
    assert.equal(steps.validate.phoneNumber, OTP_USER);
    assert.equal(steps.challenge.success, true, "the challenge ran with the new number's date of birth");
    assert.equal(steps.complete.success, true);
    assert.match(await statusText(page, "Verified"), /Verified ✔/);
  });

  test("a cancelled number change is no error: the code texted before still verifies", async () => {
    const before = (await stack.outbox(FALLBACK_USER)).length;
    const page = await openDemo({ mobile: true, phone: FALLBACK_USER });
    await waitForMessages(stack, FALLBACK_USER, before + 1);

    await page.waitForSelector("#otp:not([hidden])");
    await page.click("#otp-change");
    await page.waitForSelector("#number:not([hidden])");
    await page.click("#number-cancel");

    await page.waitForSelector("#otp:not([hidden])");
    assert.match(await statusText(page, "cancelled"), /Number change cancelled: enter the code we texted before/);
    assert.notEqual(await statusClass(page), "failed");
    await enterCode(page, "1234");
    assert.match(await statusText(page, "Verified"), /Verified ✔/);
  });

  test("a code entered after its 2 minutes is refused, and a new one works", async () => {
    const page = await openDemo({ mobile: true, phone: OTP_USER });
    await page.waitForSelector("#otp:not([hidden])");

    await stack.advanceClock(121);
    await enterCode(page, "1234");
    assert.match(await statusText(page, "expired"), /expired/);
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

describe("the SDK on its own", () => {
  test("a staged flow starts from its authToken, and the same token run again picks up where the flow is", async () => {
    const page = await demoPage(stack, { mobile: true });
    const calls = [];
    page.on("request", (request) => {
      const { pathname } = new URL(request.url());
      if (pathname.startsWith("/client/v1/") && request.method() === "POST") calls.push(pathname.slice(11));
    });
    const runs = await page.evaluate(async (phoneNumber) => {
      const { AuthenticatorBuilder } = await import("/sdk/phoneid.js");
      const started = await fetch("/demo/api/start", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ api: "staged", flowType: "mobile", phoneNumber }),
      });
      const { authToken } = await started.json();
      const authenticator = new AuthenticatorBuilder()
        .withMobileAuthImplementation("fetch")
        .withAuthFinishStep(async (result) => result)
        .build();
      const first = await authenticator.authenticate(authToken);
      const again = await authenticator.authenticate(authToken); // a reloaded page with the same token
      return { first, again };
    }, MOBILE_AUTH_USER);

    // The first run went straight to Mobile Auth; the second was refused that step (8003: decided),
    // read the session, and finished with the same outcome
    assert.equal(runs.first.status, "passed");
    assert.equal(runs.again.status, "passed");
    assert.equal(calls[0], "mobile-auth", `no session call before the first step: ${calls}`);
    assert.deepEqual(calls.slice(-2), ["mobile-auth", "session"]);
  });

  // The bound is under the SDK's 3 minutes of waiting for a link, after which it would end the same way.
  const refusalBound = { timeout: 100_000 };
  test("waiting for a link without a WebSocket stops when the server refuses the flow's token", refusalBound, async () => {
    const before = (await stack.outbox(FALLBACK_USER)).length;
    const page = await demoPage(stack, { mobile: false });
    // Given a desktop flow waiting for its texted link, asking the session (no WebSocket here)
    const run = page.evaluate(async (phoneNumber) => {
      globalThis.WebSocket = undefined;
      const { AuthenticatorBuilder } = await import("/sdk/phoneid.js");
      const started = await fetch("/demo/api/start", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ api: "staged", flowType: "desktop", phoneNumber }),
      });
      const { authToken } = await started.json();
      const authenticator = new AuthenticatorBuilder()
        .withInstantLinkFallback(async () => ({ phoneNumber }))
        .withAuthFinishStep(async (result) => result)
        .build();
      try {
        return { finished: await authenticator.authenticate(authToken) };
      } catch (error) {
        return { code: error.code, status: error.status };
      }
    }, FALLBACK_USER);
    await waitForMessages(stack, FALLBACK_USER, before + 1);

    // When the flow's token has expired (an hour later on the stack's clock)
    await stack.advanceClock(3600);

    // Then the next check is refused and the SDK stops with the API's answer, instead of asking
    // again every few seconds until its 3 minutes are up
    assert.deepEqual(await run, { code: 8002, status: 401 });
  });
});

describe("desktop (Instant Link)", () => {
  test("opening the texted link on the phone finishes the desktop page over its WebSocket", async () => {
    const before = (await stack.outbox(OTP_USER)).length;
    const desktop = await openDemo({ mobile: false, phone: OTP_USER });
    await desktop.waitForSelector("#link:not([hidden])");
    const link = await textedLink(OTP_USER, before + 1);

    const phone = await stack.page({ mobile: true });
    await phone.goto(link);

    assert.equal(new URL(phone.url()).pathname, "/demo/verified.html");
    assert.match(await statusText(desktop, "Verified"), /Verified ✔/);

    // The link works once; the page of a used link says what happened and what to do, on a phone.
    const usedPage = await stack.page({ mobile: true });
    const again = await usedPage.goto(link);
    assert.equal(again.status(), 410);
    assert.match(await usedPage.textContent("h1"), /This link can no longer be used/);
    const text = await usedPage.textContent("main");
    assert.match(text, /already used/);
    assert.match(text, /What to do: go back to the page where you started/);
    const layout = await usedPage.evaluate(() => {
      const card = document.querySelector("main").getBoundingClientRect();
      return {
        left: card.left,
        right: window.innerWidth - card.right,
        fontSize: parseFloat(getComputedStyle(document.body).fontSize),
        scrolls: document.documentElement.scrollWidth > window.innerWidth,
      };
    });
    assert.ok(Math.abs(layout.left - layout.right) <= 1, `the card is centered: ${JSON.stringify(layout)}`);
    assert.ok(layout.fontSize >= 16, `readable text: ${layout.fontSize}px`);
    assert.equal(layout.scrolls, false);
  });

  test("a link opened after its 3 minutes is refused and the desktop is not verified", async () => {
    const before = (await stack.outbox(OTP_USER)).length;
    const desktop = await openDemo({ mobile: false, phone: OTP_USER });
    await desktop.waitForSelector("#link:not([hidden])");
    const link = await textedLink(OTP_USER, before + 1);

    await stack.advanceClock(181);
    const opened = await (await stack.page({ mobile: true })).goto(link);

    assert.equal(opened.status(), 410);
    assert.match(await opened.text(), /expired/);
  });

  test("a refused new number replaces the waiting status; cancelling then stops the check as no error", async () => {
    const before = (await stack.outbox(FALLBACK_USER)).length;
    const desktop = await openDemo({ mobile: false, phone: FALLBACK_USER });
    await desktop.waitForSelector("#link:not([hidden])");
    await waitForMessages(stack, FALLBACK_USER, before + 1);
    assert.match(await statusText(desktop, "Waiting"), /Waiting for you to open the link/);

    await desktop.click("#link-change");
    await desktop.fill("#new-phone", "+1202");
    await desktop.click("#number-submit");
    assert.match(await statusText(desktop, "refused"), /That number was refused: .*phoneNumber/);
    assert.equal(await statusClass(desktop), "failed");
    assert.equal(await desktop.isHidden("#link"), true);

    await desktop.click("#number-cancel");
    assert.match(await statusText(desktop, "cancelled"), /Number change cancelled: this check stopped/);
    assert.notEqual(await statusClass(desktop), "failed");
    assert.equal(await desktop.isEnabled("#verify"), true);
  });
});

// Spends the hourly SMS budget of a number through the API, as many earlier checks would.
async function spendSmsBudget(phoneNumber) {
  const credentials = await (await fetch(`${stack.url}/_local/clients`, { method: "POST", body: "{}" })).json();
  const token = await fetch(`${stack.url}/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: "client_credentials", ...credentials }),
  });
  const bearer = { Authorization: `Bearer ${(await token.json()).access_token}`, "Content-Type": "application/json" };
  for (let flows = 0; flows < 10; flows++) {
    const started = await fetch(`${stack.url}/v3/start`, {
      method: "POST",
      headers: bearer,
      body: JSON.stringify({ flowType: "mobile", phoneNumber }),
    });
    const { authToken } = await started.json();
    for (let sends = 0; sends < 3; sends++) {
      const sent = await fetch(`${stack.url}/client/v1/otp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${authToken}`, "Content-Type": "application/json" },
        body: "{}",
      });
      if (sent.status === 429) return;
    }
  }
  throw new Error(`the SMS budget of ${phoneNumber} was never used up`);
}

describe("the hourly SMS budget", () => {
  test("used up, the page says how to reset it locally, and moving the clock an hour works", async () => {
    await spendSmsBudget(OTP_FAIL_USER);
    const page = await openDemo({ mobile: true, phone: OTP_FAIL_USER });

    assert.match(await statusText(page, "8018"), /hourly SMS budget of this phone number is used up \(8018\)/);
    await page.waitForSelector("#budget:not([hidden])");
    const advice = await page.textContent("#budget");
    assert.match(advice, /10 SMS per number/);
    assert.match(advice, /\/_local\/clock -d '\{"advanceSeconds": 3600\}'/);
    assert.equal(await fitsTheScreen(page), true);

    const sent = (await stack.outbox(OTP_FAIL_USER)).length;
    await page.click("#budget-reset");
    assert.match(await statusText(page, "clock moved"), /SMS budgets start afresh/);
    await page.click("#verify");
    await page.waitForSelector("#otp:not([hidden])");
    await waitForMessages(stack, OTP_FAIL_USER, sent + 1);
  });
});

// Every request the browser sends off 127.0.0.1 is refused and recorded; console errors too.
function watchPage(page) {
  const seen = { left: [], errors: [] };
  page.on("console", (message) => {
    if (message.type() === "error") seen.errors.push(message.text());
  });
  page.on("pageerror", (error) => seen.errors.push(error.message));
  page.context().route(
    (url) => /^(https?|wss?):$/.test(url.protocol) && url.hostname !== "127.0.0.1",
    (route) => {
      seen.left.push(route.request().url());
      return route.abort();
    },
  );
  return seen;
}

describe("the console", () => {
  test("shows the requests, the flows with their reason codes, the SMS and the day's chart, live", async () => {
    // Given the flows the tests above ran (the SIM-swapped user's failed with 9135)
    const page = await stack.page();
    const seen = watchPage(page);
    await page.goto(`${stack.url}/console`);
    await page.waitForSelector("#live.on");

    // Then the requests are rows of route, client, status and time
    const rows = page.locator("#requests tbody tr");
    await rows.filter({ hasText: "/v3/complete" }).first().waitFor();
    const started = rows.filter({ hasText: "/v3/start" }).first();
    assert.match(await started.locator("td.status").textContent(), /^200$/);
    assert.match(await started.locator("td.client").textContent(), /^[0-9a-f]{32}$/);
    assert.match(await started.locator("td.ms").textContent(), /^\d+ ms$/);

    // And the failed flow shows its steps in order, its outcome and its reason code with its meaning
    const failed = page.locator(".flow", { hasText: "9135" }).first();
    assert.equal(await failed.locator(".outcome").textContent(), "fail");
    const steps = await failed.locator("ol.steps li").allTextContents();
    assert.deepEqual(
      steps.filter((step) => !step.startsWith("client")).map((step) => step.split(" ")[0]),
      ["start", "validate", "challenge", "complete"],
    );
    assert.match(await failed.locator(".reasons").textContent(), /9135 Possible takeover: SIM swap under 24 hours/);

    // And the SMS sent, with the code masked
    const texts = await page.locator("#messages li").allTextContents();
    assert.ok(texts.some((text) => text.includes(`SMS to ${OTP_USER}`)), "the OTP user's SMS is listed");
    assert.ok(!texts.some((text) => /\b1234\b/.test(text)), "no code is shown");

    // And the day's chart has a bar for the passes and one for 9135
    assert.ok(Number(await page.locator('#chart g.bar[data-label="passed"] text.count').textContent()) >= 1);
    assert.ok(Number(await page.locator('#chart g.bar[data-label="9135"] text.count').textContent()) >= 1);

    // When another flow starts, its request appears without a reload
    const before = await rows.count();
    const credentials = await (await fetch(`${stack.url}/_local/clients`, { method: "POST", body: "{}" })).json();
    await fetch(`${stack.url}/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "client_credentials", ...credentials }),
    });
    // (a row of that client: other pages of this file may still be asking the stack meanwhile)
    await page.waitForFunction(
      ([count, client]) =>
        document.querySelectorAll("#requests tbody tr").length > count &&
        [...document.querySelectorAll("#requests tbody tr td.client")].some((cell) => cell.textContent === client),
      [before, credentials.client_id],
    );

    assert.deepEqual(seen.left, [], "no request left 127.0.0.1");
    assert.deepEqual(seen.errors, [], "no console error");
  });

  test("draws a Connect batch's progress and a webhook delivery's attempts from the feed", async () => {
    // Given a feed holding a verifying batch and a delivery retried once (the Python tests prove
    // the stack feeds these from its batches table and its queue poller)
    const page = await stack.page();
    const seen = watchPage(page);
    const feed = {
      requests: [],
      flows: [],
      messages: [],
      batches: [
        {
          batchId: "b-1", file: "acme_US_verifiedUser_20260301120000.csv", client: "acme", state: "verifying",
          createdAt: "2026-11-26T09:00:00+00:00", rows: 1000, done: 500, passed: 0, failed: 12, progress: 0.5,
          chunks: 4, chunksDone: 2, reason: null, reasons: {},
        },
      ],
      webhooks: [
        {
          eventId: "e-1", event: "SIM_SWAP", clientId: "c-1", phone: "***42", endpoint: "https://hooks.example.com/phoneid",
          outcome: "settled",
          attempts: [
            { attempt: 1, at: "2026-11-26T09:00:00+00:00", outcome: "failed", nextRetry: "2026-11-26T09:00:30+00:00" },
            { attempt: 2, at: "2026-11-26T09:00:30+00:00", outcome: "settled", nextRetry: null },
          ],
        },
      ],
      today: { date: "2026-11-26", passed: 0, failed: 0, byReason: {}, connect: { passed: 0, failed: 12, byReason: { 9003: 12 } } },
      reasonText: { 9003: "Identity not found" },
    };
    await page.route("**/_local/console/feed*", (route) => route.fulfill({ json: feed }));
    await page.goto(`${stack.url}/console`);
    await page.waitForSelector("#live.on");

    const batch = page.locator("#batches li").first();
    assert.equal(await batch.locator("progress").evaluate((bar) => bar.value), 0.5);
    assert.match(await batch.textContent(), /acme_US_verifiedUser_20260301120000\.csv/);
    assert.match(await batch.locator(".counts").textContent(), /500 of 1000 rows done · 0 passed · 12 failed \(chunk 2 of 4\)/);
    const delivery = page.locator("#webhooks li").first();
    assert.match(await delivery.textContent(), /SIM_SWAP/);
    assert.match(await delivery.textContent(), /https:\/\/hooks\.example\.com\/phoneid/);
    assert.deepEqual(await delivery.locator("ol.attempts li").allTextContents(), [
      "attempt 1: failed at 2026-11-26 09:00:00, next retry 2026-11-26 09:00:30",
      "attempt 2: settled at 2026-11-26 09:00:30",
    ]);
    assert.match(await page.textContent('#chart g.bar[data-label="9003"]'), /9003 Identity not found/);
    assert.deepEqual(seen.left, [], "no request left 127.0.0.1");
    assert.deepEqual(seen.errors, [], "no console error");
  });
});

describe("an EU stack", () => {
  let eu;
  before(async () => {
    eu = await startStack({ env: { PHONEID_REGION: "EU" } });
  });
  after(async () => {
    await eu?.stop();
  });

  test("prefills a test user of its own region, whose check verifies at the first click", async () => {
    const page = await demoPage(eu);
    assert.match(await page.textContent("#stack"), /Sandbox tier, EU region/);
    const phone = await page.inputValue("#phone");
    assert.match(phone, /^\+353/);

    await page.click("#verify");
    await page.waitForSelector("#otp:not([hidden])");
    await page.fill("#otp-code", "1234");
    await page.click("#otp-submit");

    await page.waitForFunction(() => /Verified|Not verified|Stopped/.test(document.querySelector("#status").textContent));
    assert.match(await page.textContent("#status"), /Verified ✔/);
  });
});
