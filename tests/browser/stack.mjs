// Starts `phoneid dev` (the local stack) and Debian's Chromium for one test file.
import { execFile, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach } from "node:test";
import { chromium, devices } from "playwright-core";

const ROOT = resolve(import.meta.dirname, "../..");

// How long any wait may last before the test fails: a bound for a hang, never a speed check. Generous,
// because the gate runs the suite beside these tests on two CPUs, where the stack's first call to each
// function starts its worker process slowly (docs/performance.md, "The gate").
export const PATIENCE = 120_000;
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

// A failed test prints what the stack and the browser logged while it ran: an assertion or a timeout
// alone does not say which side stopped.
const running = new Set();
beforeEach(() => {
  for (const stack of running) stack.mark = stack.output.length;
});
afterEach((t) => {
  if (t.passed) return;
  for (const stack of running) {
    const lines = stack.output.slice(stack.mark ?? 0).join("").split("\n").slice(-120);
    console.error(`--- phoneid dev at ${stack.url} and its pages, during "${t.name}":\n${lines.join("\n")}`);
  }
});

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
    server.on("error", fail);
  });
}

async function waitUntilListening(url, process, output) {
  const deadline = Date.now() + PATIENCE;
  while (Date.now() < deadline) {
    if (process.exitCode !== null) throw new Error(`phoneid dev exited:\n${output.join("")}`);
    try {
      const response = await fetch(`${url}/_local/info`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`phoneid dev did not listen within ${PATIENCE / 1000} s:\n${output.join("")}`);
}

// `env` sets the stack's settings, e.g. {PHONEID_TIER: "production"} or {PHONEID_REGION: "EU"} (README,
// "The local stack"); those not given are the defaults (a Sandbox stack of the US region), whatever
// the shell running the tests says.
export async function startStack({ env: settings = {} } = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const output = [];
  const state = join(mkdtempSync(join(tmpdir(), "phoneid-")), "dev.json");
  const env = { ...process.env, PHONEID_DEV_STATE: state };
  for (const name of Object.keys(env)) {
    if (/^(AWS_|PHONEID_CLIENT|MOTO_|PHONEID_TIER$|PHONEID_REGION$|PHONEID_DEVICE_MSISDN$)/.test(name)) delete env[name];
  }
  Object.assign(env, settings);
  const server = spawn(join(ROOT, ".venv/bin/phoneid"), ["dev", "--port", String(port)], { env, cwd: ROOT });
  server.stdout.on("data", (chunk) => output.push(chunk.toString()));
  server.stderr.on("data", (chunk) => output.push(chunk.toString()));
  await waitUntilListening(url, server, output);

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });

  const stack = {
    url,
    output,
    // A desktop browser, or a phone (iPhone user agent, touch, a 390 px wide screen).
    async page({ mobile = false } = {}) {
      const context = await browser.newContext(mobile ? { ...devices["iPhone 13"], defaultBrowserType: undefined } : {});
      context.setDefaultTimeout(PATIENCE);
      const page = await context.newPage();
      const name = mobile ? "phone" : "desktop";
      page.on("console", (message) => output.push(`[${name} console ${message.type()}] ${message.text()}\n`));
      page.on("pageerror", (error) => output.push(`[${name} error] ${error.message}\n`));
      page.on("requestfailed", (request) =>
        output.push(`[${name} request failed] ${request.method()} ${request.url()}: ${request.failure()?.errorText}\n`),
      );
      return page;
    },
    // The `phoneid` CLI against this stack (`--local` finds it through the state file); its output.
    cli(...args) {
      return new Promise((done, fail) => {
        execFile(join(ROOT, ".venv/bin/phoneid"), args, { env, cwd: ROOT }, (error, stdout, stderr) => {
          if (error) fail(new Error(`phoneid ${args.join(" ")} failed:\n${stdout}${stderr}`));
          else done(stdout);
        });
      });
    },
    async outbox(to) {
      const messages = await (await fetch(`${url}/_local/outbox`)).json();
      return messages.filter((message) => !to || message.to === to);
    },
    async advanceClock(seconds) {
      const response = await fetch(`${url}/_local/clock`, {
        method: "POST",
        body: JSON.stringify({ advanceSeconds: seconds }),
      });
      if (!response.ok) throw new Error(await response.text());
    },
    async stop() {
      running.delete(stack);
      await browser.close();
      server.kill("SIGINT");
      await new Promise((done) => server.once("exit", done));
    },
  };
  running.add(stack);
  return stack;
}

// Waits until the outbox holds `count` messages for `to`, and returns them.
export async function waitForMessages(stack, to, count) {
  const deadline = Date.now() + PATIENCE;
  for (;;) {
    const messages = await stack.outbox(to);
    if (messages.length >= count) return messages;
    if (Date.now() > deadline) throw new Error(`expected ${count} SMS to ${to}, got ${messages.length}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}
