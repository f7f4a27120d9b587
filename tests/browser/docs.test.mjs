// The API reference at /docs: the vendored Redoc renders docs/openapi.json in Chromium, offline.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startStack } from "./stack.mjs";

let stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

const elsewhere = (url) => /^(https?|wss?):$/.test(url.protocol) && url.hostname !== "127.0.0.1";

test("the API reference renders every operation with nothing fetched from elsewhere and no console error", async () => {
  const page = await stack.page();
  // A request the page's policy refuses never reaches the network: the browser says so on the console.
  const errors = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  // Every request the browser sends off 127.0.0.1 is recorded, and refused: the page must not need it.
  const left = [];
  await page.context().route(elsewhere, (route) => {
    left.push(route.request().url());
    return route.abort();
  });
  page.on("websocket", (socket) => {
    if (elsewhere(new URL(socket.url()))) left.push(socket.url());
  });

  const answer = await page.goto(`${stack.url}/docs`, { waitUntil: "networkidle" });
  await page.getByText("/v3/start").first().waitFor();

  assert.equal(answer.status(), 200);
  const shown = await page.locator("body").innerText();
  const document = await (await fetch(`${stack.url}/openapi.json`)).json();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of Object.keys(operations)) {
      assert.ok(shown.includes(`${method.toUpperCase()} ${path}`), `${method.toUpperCase()} ${path} is listed`);
    }
  }

  // Searching (a worker of Redoc's own) and opening an operation stay on the page
  await page.fill("input[placeholder='Search...']", "verify");
  await page.getByText("POST /v3/start").first().click();
  await page.waitForLoadState("networkidle");
  assert.match(page.url(), /\/docs#/);
  assert.deepEqual(left, [], "no request left 127.0.0.1");
  assert.deepEqual(errors, [], "no console error");
});
