import assert from "node:assert/strict";
import { test } from "node:test";

import { BadRequestError, NotFoundError, PhoneIdClient, type DecisionSummaryItem } from "@phoneid/server";

import { FakeApi } from "./fake.js";

const BASE = "http://phoneid.test";
const BATCH_ITEM = "c0a9f1d2-5b8e-4a57-9d1e-3f6b2c7a8e90#3";

function client(api: FakeApi): PhoneIdClient {
  return new PhoneIdClient({ baseUrl: BASE, clientId: "id-1", clientSecret: "secret-1", fetch: api.fetch });
}

function item(n: number): DecisionSummaryItem {
  return {
    id: `d-${n}`,
    kind: "verify",
    flow: "humanAssurance",
    startedAt: "2026-12-01T10:00:00.000Z",
    endedAt: "2026-12-01T10:00:01.000Z",
    outcome: "pass",
    success: true,
    number: { country: "US", lastTwo: "12" },
  };
}

function query(url: string): Record<string, string> {
  return Object.fromEntries(new URL(url).searchParams.entries());
}

async function all<Item>(items: AsyncIterable<Item>): Promise<Item[]> {
  const read: Item[] = [];
  for await (const each of items) read.push(each);
  return read;
}

test("the list yields every record of every page and stops at the page without lastKey", async () => {
  const api = new FakeApi().answer(
    { status: 200, body: { results: [item(1), item(2)], lastKey: "k1" } },
    { status: 200, body: { lastKey: "k2" } }, // a sparse filter: an empty page (no results), not the end
    { status: 200, body: { results: [item(3)] } },
  );
  const records = await all(client(api).listDecisions({ kind: "verify", limit: 2 }));

  assert.deepEqual(records.map((record) => record.id), ["d-1", "d-2", "d-3"]);
  assert.equal(records[0]?.number?.lastTwo, "12");
  assert.deepEqual(api.calls().map((call) => query(call.url)), [
    { kind: "verify", limit: "2" },
    { kind: "verify", limit: "2", startKey: "k1" },
    { kind: "verify", limit: "2", startKey: "k2" },
  ]);
});

test("the list asks for nothing before it is read and for no page past what is read", async () => {
  const api = new FakeApi().answer(
    { status: 200, body: { results: [item(1), item(2)], lastKey: "k1" } },
    { status: 200, body: { results: [item(3)] } },
  );
  const records = client(api).listDecisions();
  assert.equal(api.calls().length, 0);

  const read: string[] = [];
  for await (const record of records) {
    read.push(record.id);
    if (read.length === 2) break;
  }

  assert.deepEqual(read, ["d-1", "d-2"]);
  assert.equal(api.calls().length, 1);
});

test("every filter is sent under the API's name, the phone number's + escaped", async () => {
  const api = new FakeApi().answer({ status: 200, body: {} });
  await all(
    client(api).listDecisions({
      from: "2026-11-01T00:00:00Z",
      to: "2026-12-01T00:00:00Z",
      phoneNumber: "+12025550112",
      kind: "verify-batch",
      outcome: "fail",
      reasonCode: 9135,
      clientRequestId: "req-9",
      limit: 100,
      startKey: "saved-key",
    }),
  );

  const [sent] = api.calls();
  assert.equal(sent?.method, "GET");
  assert.ok(sent?.url.includes("phoneNumber=%2B12025550112"));
  assert.deepEqual(query(sent?.url ?? ""), {
    from: "2026-11-01T00:00:00Z",
    to: "2026-12-01T00:00:00Z",
    phoneNumber: "+12025550112",
    kind: "verify-batch",
    outcome: "fail",
    reasonCode: "9135",
    clientRequestId: "req-9",
    limit: "100",
    startKey: "saved-key",
  });
});

test("a refused page rejects when the iteration reaches it", async () => {
  const api = new FakeApi().answer(
    { status: 200, body: { results: [item(1)], lastKey: "tampered" } },
    { status: 400, body: { code: 8001, message: "Invalid parameters: startKey: is not a key of this list" } },
  );
  const records = client(api).listDecisions();

  assert.equal((await records.next()).value?.id, "d-1");
  await assert.rejects(records.next(), (error: unknown) => {
    assert.ok(error instanceof BadRequestError);
    assert.equal(error.code, 8001);
    return true;
  });
});

test("a record is read by its id, the # of a batch item escaped", async () => {
  const view = { ...item(1), id: BATCH_ITEM, kind: "verify-batch", tier: "sandbox", region: "US", clientRequestId: "req-4" };
  const api = new FakeApi().answer({ status: 200, body: view });
  const answer = await client(api).getDecision(BATCH_ITEM, { clientRequestId: "req-4" });

  assert.equal(api.calls()[0]?.url, `${BASE}/v3/decisions/c0a9f1d2-5b8e-4a57-9d1e-3f6b2c7a8e90%233?clientRequestId=req-4`);
  assert.deepEqual([answer.id, answer.kind, answer.tier, answer.clientRequestId], [BATCH_ITEM, "verify-batch", "sandbox", "req-4"]);
});

test("an id the client has no record of is a NotFoundError", async () => {
  const api = new FakeApi().answer({ status: 404, body: { code: 8011, message: "Decision not found" } });
  await assert.rejects(client(api).getDecision("d-404"), (error: unknown) => {
    assert.ok(error instanceof NotFoundError);
    assert.deepEqual([error.status, error.code, error.message], [404, 8011, "Decision not found"]);
    return true;
  });
});

test("the summary sends its days and answers every count", async () => {
  const summary = {
    firstDay: "2026-11-01",
    lastDay: "2026-11-30",
    total: 3,
    passed: 1,
    failed: 1,
    errors: 1,
    byReasonCode: { "9135": 1 },
    byKind: { staged: 2, verify: 1 },
    byDay: [{ day: "2026-11-02", total: 3, passed: 1, failed: 1, errors: 1 }],
    conversion: { sms: { attempted: 2, succeeded: 1, rate: 0.5 }, instantLink: { attempted: 0, succeeded: 0 } },
  };
  const api = new FakeApi().answer({ status: 200, body: summary });
  const answer = await client(api).summariseDecisions({ from: "2026-11-01", to: "2026-11-30" });

  const [sent] = api.calls();
  assert.equal(`${sent?.method} ${sent?.url.slice(BASE.length)}`, "GET /v3/decisions/summary?from=2026-11-01&to=2026-11-30");
  assert.equal(answer.total, 3);
  assert.equal(answer.byDay?.[0]?.day, "2026-11-02");
  assert.equal(answer.conversion?.["sms"]?.rate, 0.5);
  assert.equal(answer.conversion?.["instantLink"]?.rate, undefined);
});

test("erasing a number sends it in the query and answers how many", async () => {
  const api = new FakeApi().answer({ status: 200, body: { erased: 4 } });
  const answer = await client(api).eraseDecisions("+12025550112");

  const [sent] = api.calls();
  assert.equal(`${sent?.method} ${sent?.url.slice(BASE.length)}`, "DELETE /v3/decisions?phoneNumber=%2B12025550112");
  assert.equal(sent?.body, undefined);
  assert.equal(answer.erased, 4);
});
