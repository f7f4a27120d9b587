// The console's Decisions panel in a real browser, on decision records the local stack wrote for the
// flows a client ran through its API: its latest decisions, a search by number and by id, one opened
// whole, the API's code and message for what it refuses, and the summary charted.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startStack } from "./stack.mjs";

const SIM_SWAP_USER = "+14045550135"; // Quin Code9135: complete fails with 9135 (docs/sandbox.md)
const SIM_SWAP_DOB = "1986-05-17";
const VERIFIED_USER = "+12025550112"; // Lena Ortiz: Verified User passes
const NUMBERS = [SIM_SWAP_USER, VERIFIED_USER].flatMap((number) => [number, number.slice(2)]);

let stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

// A client of the stack with its access token, calling the API as an integrator's backend does.
async function integrator(name) {
  const credentials = await (
    await fetch(`${stack.url}/_local/clients`, { method: "POST", body: JSON.stringify({ name, solution: "identity" }) })
  ).json();
  const token = await fetch(`${stack.url}/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: "client_credentials", ...credentials }),
  });
  const bearer = `Bearer ${(await token.json()).access_token}`;
  return {
    clientId: credentials.client_id,
    async post(path, body) {
      const answer = await fetch(`${stack.url}${path}`, {
        method: "POST",
        headers: { Authorization: bearer, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      const json = await answer.json();
      assert.equal(answer.status, 200, `${path}: ${JSON.stringify(json.code ?? json.message)}`);
      return json;
    },
  };
}

// The staged flow of the SIM-swapped user, which complete fails with 9135; its correlationId.
async function stagedFlow(client) {
  const { correlationId } = await client.post("/v3/start", { flowType: "mobile", phoneNumber: SIM_SWAP_USER });
  await client.post("/v3/validate", { correlationId });
  const { individual } = await client.post("/v3/challenge", { correlationId, dob: SIM_SWAP_DOB });
  const completed = await client.post("/v3/complete", { correlationId, individual });
  assert.equal(completed.success, false);
  return correlationId;
}

// Every request the browser sends off 127.0.0.1 is refused and recorded, every URL it asks is kept,
// and console errors too, but for the statuses of the searches the test makes fail.
function watchPage(page) {
  const seen = { left: [], urls: [], errors: [] };
  page.on("console", (message) => {
    // (the browser's line for each answer the test asks to be refused is no error of the page's)
    const refused = /^Failed to load resource: the server responded with a status of 40[04] /;
    if (message.type() === "error" && !refused.test(message.text())) seen.errors.push(message.text());
  });
  page.on("pageerror", (error) => seen.errors.push(error.message));
  page.on("request", (request) => seen.urls.push(request.url()));
  page.context().route(
    (url) => /^(https?|wss?):$/.test(url.protocol) && url.hostname !== "127.0.0.1",
    (route) => {
      seen.left.push(route.request().url());
      return route.abort();
    },
  );
  return seen;
}

function rowIds(page) {
  return page.locator("#decisions tbody tr").evaluateAll((rows) => rows.map((row) => row.dataset.id));
}

test("a client's decisions listed, searched by number and id, opened whole, and summarised in charts", async () => {
  // Given a client whose staged flow failed with 9135 and whose Verified User check passed
  const client = await integrator("decisions-console");
  const flowId = await stagedFlow(client);
  await client.post("/v3/verify", {
    phoneNumber: VERIFIED_USER,
    verificationType: "verifiedUser",
    firstName: "Lena",
    lastName: "Ortiz",
  });

  // When the operator opens the console and chooses that client
  const page = await stack.page();
  const seen = watchPage(page);
  await page.goto(`${stack.url}/console`);
  await page.waitForSelector(`#decision-client option[value="${client.clientId}"]`, { state: "attached" });
  await page.selectOption("#decision-client", client.clientId);

  // Then its two decisions are listed newest first, each number as its country and last two digits
  await page.waitForFunction(() => document.querySelectorAll("#decisions tbody tr").length === 2);
  const rows = page.locator("#decisions tbody tr");
  assert.deepEqual(await rows.locator("td.kind").allTextContents(), ["verify", "staged"]);
  assert.deepEqual(await rows.locator("td.number").allTextContents(), ["US ••12", "US ••35"]);
  assert.deepEqual(await rows.locator("td.outcome").allTextContents(), ["pass", "fail"]);
  assert.equal((await rowIds(page))[1], flowId);
  const verifyId = (await rowIds(page))[0];

  // When the operator searches the SIM-swapped user's number
  await page.fill("#decision-phone", SIM_SWAP_USER);
  await page.click("#decision-find");
  await page.waitForFunction(() => document.querySelectorAll("#decisions tbody tr").length === 1);

  // Then only that flow's decision is found, with its reason code
  assert.deepEqual(await rowIds(page), [flowId]);
  assert.equal(await rows.locator("td.reasons").first().textContent(), "9135");
  assert.match(await page.textContent("#decisions-caption"), /the number searched/);

  // When the operator opens it
  await page.click(`#decisions tbody tr[data-id="${flowId}"] button`);
  const view = page.locator("#decision-view");
  await view.waitFor();

  // Then it shows whole: evaluation, possession, policy and facts with their source and as-of
  assert.match(await view.locator("h3").textContent(), new RegExp(`${flowId}\\s*fail\\s*staged`));
  const evaluation = await view.locator("table.evaluation tbody tr").allTextContents();
  assert.ok(
    evaluation.some((row) => /^authenticationfail.*9135 Possible takeover: SIM swap under 24 hours/.test(row)),
    evaluation.join(" | "),
  );
  assert.match(await view.locator("dl.possession").textContent(), /status/);
  assert.match(await view.locator("dl.policy").textContent(), /hash[0-9a-f]{64}/);
  const facts = view.locator("table.facts tbody tr");
  const swap = facts.filter({ hasText: "simSwapHoursAgo" });
  assert.equal(await swap.count(), 1);
  const [, , source, asOf] = await swap.locator("td").allTextContents();
  assert.ok(source.length > 0, "the fact names its source");
  assert.match(asOf, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
  assert.match(await view.locator("dl.about").textContent(), /stepcomplete/);

  // When the operator searches by the Verified User check's id
  await page.fill("#decision-phone", "");
  await page.fill("#decision-id", verifyId);
  await page.click("#decision-find");
  await page.waitForFunction((id) => document.querySelector("#decision-view").dataset.id === id, verifyId);

  // Then that decision is the one found and open
  assert.deepEqual(await rowIds(page), [verifyId]);
  assert.match(await view.locator("h3").textContent(), /pass\s*verify/);

  // When the operator searches an id the client has no record of, and a number that is not one
  await page.fill("#decision-id", "no-such-decision");
  await page.click("#decision-find");
  await page.waitForSelector("#decision-error:not([hidden])");
  // Then each shows the API's status, code and message
  assert.equal(await page.textContent("#decision-error"), "404/8011: Decision not found");
  await page.fill("#decision-id", "");
  await page.fill("#decision-phone", "+1202555");
  await page.click("#decision-find");
  await page.waitForFunction(() => document.querySelector("#decision-error").textContent.startsWith("400/8001: "));
  assert.match(await page.textContent("#decision-error"), /^400\/8001: Invalid parameters: phoneNumber: /);
  assert.equal(await rows.count(), 0, "what was found before is no longer shown");

  // And the summary charts the day's two decisions, the failure's reason code and the channels
  const today = (await page.getAttribute("#summary-days g.day:last-of-type", "data-day")) ?? "";
  assert.match(today, /^\d{4}-\d\d-\d\d$/);
  assert.match(await page.textContent("#summary-totals"), /^2 decisions: 1 passed, 1 failed, 0 errors/);
  assert.equal(await page.textContent(`#summary-days g.day[data-day="${today}"] text.count`), "2");
  assert.equal(await page.locator(`#summary-days g.day[data-day="${today}"] rect`).count(), 2);
  assert.equal(await page.locator("#summary-days g.day").count(), 30);
  const reason = page.locator('#summary-reasons g.bar[data-label="9135"]');
  assert.equal(await reason.locator("title").textContent(), "9135 Possible takeover: SIM swap under 24 hours: 1");
  assert.equal(await reason.locator("text.count").textContent(), "1");
  const channels = await page.locator("#summary-conversion g.bar").evaluateAll((bars) => bars.map((bar) => bar.dataset.label));
  assert.deepEqual(channels, ["sms", "instantLink", "mobileAuth"]);

  // And no number in clear was ever in the page or in a URL it asked, nothing left the stack, and
  // nothing went wrong in the page
  await page.fill("#decision-phone", "");
  const shown = await page.evaluate(() => document.body.innerText + JSON.stringify({ ...localStorage, ...sessionStorage }));
  for (const number of NUMBERS) {
    assert.ok(!shown.includes(number), "no number shows");
    assert.ok(!seen.urls.some((url) => decodeURIComponent(url).includes(number)), "no number in a URL");
  }
  assert.deepEqual(seen.left, [], "no request left 127.0.0.1");
  assert.deepEqual(seen.errors, [], "no console error");
});
