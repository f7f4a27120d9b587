// The demo on a production-tier local stack: real random codes through moto's SNS (read from the
// outbox), Mobile Auth against the fake CAMARA operator (no SIM here, so it falls back to the code),
// and the challenge against an identity imported into the stack's identity table.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { startStack, waitForMessages } from "./stack.mjs";

const CUSTOMER = "+12025550142"; // the number a US production demo prefills
const NOOR = {
  phoneNumber: CUSTOMER,
  firstName: "Noor",
  lastName: "Haddad",
  dob: "1987-06-15",
  ssn: "123-45-6789",
  addresses: [{ address: "42 Quarry Road", city: "Albany", region: "NY", postalCode: "12207" }],
  emailAddresses: ["noor.haddad@example.com"],
};

let stack;
before(async () => {
  stack = await startStack({ env: { PHONEID_TIER: "production" } });
  const file = join(mkdtempSync(join(tmpdir(), "phoneid-identities-")), "identities.jsonl");
  writeFileSync(file, `${JSON.stringify(NOOR)}\n`);
  assert.match(await stack.cli("identities", "import", file, "--local"), /imported 1 identit(y|ies), rejected 0/);
});
after(async () => {
  await stack?.stop();
});

// The demo page on a phone (390 px wide), once it knows its stack.
async function demoPage({ mobile = true } = {}) {
  const page = await stack.page({ mobile });
  await page.goto(`${stack.url}/demo/`);
  await page.waitForSelector("#verify:enabled");
  return page;
}

async function statusText(page, expected) {
  await page.waitForFunction((text) => document.querySelector("#status").textContent.includes(text), expected);
  return page.textContent("#status");
}

async function fitsTheScreen(page) {
  return page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
}

// The code of the newest SMS to the customer, once `count` were sent.
async function textedCode(count) {
  const messages = await waitForMessages(stack, CUSTOMER, count);
  return messages.at(-1).text.match(/\b(\d{6})\b/)[1];
}

async function enterCode(page, code) {
  await page.waitForSelector("#otp:not([hidden])");
  await page.fill("#otp-code", code);
  await page.click("#otp-submit");
}

function wrong(code) {
  return code.replace(/\d/g, (digit) => String((Number(digit) + 1) % 10));
}

test("a new user verifies by the texted code: from the number to Verified, with the challenge's individual", async () => {
  const page = await demoPage();
  assert.match(await page.textContent("#stack"), /production tier, US region/);
  assert.equal(await page.isHidden("#user-picker"), true, "production has no test users to pick");
  assert.equal(await page.isVisible("#hint-production"), true);
  assert.equal(await page.inputValue("#phone"), CUSTOMER, "a number of the stack's own region is prefilled");
  assert.equal(await fitsTheScreen(page), true);

  const sent = (await stack.outbox(CUSTOMER)).length;
  await page.fill("#dob", NOOR.dob);
  await page.click("#verify");
  const code = await textedCode(sent + 1); // Mobile Auth found no SIM: the code went by SMS
  await page.waitForSelector("#otp:not([hidden])");
  assert.equal(await page.isDisabled("#verify"), true, "Verify is disabled while the check runs");

  await enterCode(page, wrong(code));
  assert.match(await statusText(page, "left"), /The code is not correct\. 2 code entries left\./);
  assert.equal(await fitsTheScreen(page), true);
  await enterCode(page, code);

  assert.match(await statusText(page, "Verified"), /Verified ✔/);
  await page.waitForSelector("#result:not([hidden])");
  const steps = JSON.parse(await page.textContent("#result"));
  assert.equal(steps.validate.phoneNumber, CUSTOMER);
  assert.equal(steps.challenge.individual.firstName, "Noor");
  assert.equal(steps.challenge.individual.ssn, "6789", "production returns the SSN's last four only");
  assert.equal(steps.complete.success, true);
  assert.equal(await page.isEnabled("#verify"), true);
  assert.equal(await page.isHidden("#reasons"), true);
  assert.equal(await fitsTheScreen(page), true);
});

test("a name that does not match the records is not verified, and the page lists the evaluation's reasons", async () => {
  const page = await demoPage();
  const sent = (await stack.outbox(CUSTOMER)).length;
  await page.fill("#dob", NOOR.dob);
  await page.fill("#first-name", "Noor");
  await page.fill("#last-name", "Smith");
  await page.click("#verify");
  await enterCode(page, await textedCode(sent + 1));

  assert.match(await statusText(page, "Not verified"), /Not verified ✘/);
  await page.waitForSelector("#reasons:not([hidden])");
  const reasons = await page.textContent("#reasons");
  assert.match(reasons, /9014 Name mismatch \(identification\)/);
  assert.match(reasons, /9001 Identity not confirmed with 4 elements/);
  assert.equal(await fitsTheScreen(page), true);
});

test("on a desktop the texted link verifies once; the used link's page says what to do", async () => {
  const desktop = await demoPage({ mobile: false });
  const sent = (await stack.outbox(CUSTOMER)).length;
  await desktop.fill("#dob", NOOR.dob);
  await desktop.click("#verify");
  await desktop.waitForSelector("#link:not([hidden])");
  const messages = await waitForMessages(stack, CUSTOMER, sent + 1);
  const link = messages.at(-1).text.match(/https?:\/\/\S+\/l\/[\w-]+/)[0];
  assert.equal(await desktop.isDisabled("#verify"), true);

  const phone = await stack.page({ mobile: true });
  await phone.goto(link);
  assert.match(await phone.textContent("#verified"), /your phone is verified/);
  assert.match(await statusText(desktop, "Verified"), /Verified ✔/);

  const used = await stack.page({ mobile: true });
  const again = await used.goto(link);
  assert.equal(again.status(), 410);
  assert.match(await used.textContent("main"), /This link can no longer be used.*expired.*What to do/s);
  assert.equal(await fitsTheScreen(used), true);
});
