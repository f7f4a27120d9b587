import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AuthenticationError,
  IdempotencyError,
  NotFoundError,
  PermissionDeniedError,
  PhoneIdClient,
  PhoneIdError,
  RateLimitError,
  ROUTES,
  ServerError,
  BadRequestError,
} from "@phoneid/server";

import { FakeApi } from "./fake.js";

const BASE = "http://phoneid.test";

function client(api: FakeApi, clock: () => number = () => 0): PhoneIdClient {
  return new PhoneIdClient({ baseUrl: `${BASE}/`, clientId: "id-1", clientSecret: "secret-1", fetch: api.fetch, clock });
}

test("the token is fetched once with the client credentials and reused", async () => {
  const api = new FakeApi();
  const phoneid = client(api);
  await phoneid.validate({ correlationId: "c" });
  await phoneid.validate({ correlationId: "c" });
  assert.equal(api.tokensIssued, 1);
  const token = api.sent[0];
  assert.equal(token?.headers["content-type"], "application/x-www-form-urlencoded");
  assert.deepEqual(Object.fromEntries(new URLSearchParams(token?.body)), {
    grant_type: "client_credentials",
    client_id: "id-1",
    client_secret: "secret-1",
  });
  assert.deepEqual(api.calls().map((call) => call.headers["authorization"]), ["Bearer token-1", "Bearer token-1"]);
});

test("a token is renewed once a tenth of its life is left", async () => {
  let now = 0;
  const api = new FakeApi(3600);
  const phoneid = client(api, () => now);
  await phoneid.accessToken();
  now = 3239_000; // 361 s left of 3600: kept
  assert.equal(await phoneid.accessToken(), "token-1");
  now = 3240_000; // 360 s left: renewed
  assert.equal(await phoneid.accessToken(), "token-2");
});

test("a short-lived token is renewed once a minute of it is left", async () => {
  let now = 0;
  const api = new FakeApi(300);
  const phoneid = client(api, () => now);
  await phoneid.accessToken();
  now = 239_000;
  assert.equal(await phoneid.accessToken(), "token-1");
  now = 240_000;
  assert.equal(await phoneid.accessToken(), "token-2");
});

test("calls that find no token share one token request", async () => {
  const api = new FakeApi();
  const phoneid = client(api);
  await Promise.all([phoneid.validate({ correlationId: "a" }), phoneid.validate({ correlationId: "b" })]);
  assert.equal(api.tokensIssued, 1);
});

test("a 401 fetches one new token and sends the call again", async () => {
  const unauthorized = { status: 401, body: { code: 8002, message: "Unauthorized request: credentials missing or invalid" } };
  const api = new FakeApi().answer(unauthorized, { status: 200, body: { success: true, next: { done: "done" } } });
  const answer = await client(api).complete({ correlationId: "c", individual: {} });
  assert.equal(answer.success, true);
  assert.equal(api.tokensIssued, 2);
  assert.deepEqual(api.calls().map((call) => call.headers["authorization"]), ["Bearer token-1", "Bearer token-2"]);
});

test("a second 401 is an AuthenticationError", async () => {
  const unauthorized = { status: 401, body: { code: 8002, message: "Unauthorized request: credentials missing or invalid" } };
  const api = new FakeApi().answer(unauthorized, unauthorized);
  await assert.rejects(client(api).validate({ correlationId: "c" }), (error: unknown) => {
    assert.ok(error instanceof AuthenticationError);
    assert.equal(error.status, 401);
    assert.equal(error.code, 8002);
    return true;
  });
  assert.equal(api.tokensIssued, 2);
});

test("refused credentials at /token are an AuthenticationError", async () => {
  const refusing: typeof fetch = async () =>
    new Response(JSON.stringify({ code: 8002, message: "Unauthorized request: invalid client credentials" }), { status: 401 });
  const phoneid = new PhoneIdClient({ baseUrl: BASE, clientId: "x", clientSecret: "y", fetch: refusing });
  await assert.rejects(phoneid.verify({ phoneNumber: "+12025550112", verificationType: "humanAssurance" }), AuthenticationError);
});

const ERRORS = [
  {
    status: 400,
    body: { code: 8001, message: "Invalid parameters: flowType: Input should be 'desktop' or 'mobile'", clientRequestId: "r-1" },
    kind: BadRequestError,
  },
  { status: 403, body: { code: 8003, message: "Step validate called out of order", correlationId: "c-1", next: { "v3-challenge": "/v3/challenge" } }, kind: PermissionDeniedError },
  { status: 404, body: { code: 8011, message: "Identity not found" }, kind: NotFoundError },
  { status: 409, body: { code: 8020, message: "Idempotency Key In Use" }, kind: IdempotencyError },
  { status: 422, body: { code: 8021, message: "Idempotency Key Reused" }, kind: IdempotencyError },
  { status: 429, body: { code: 8018, message: "Rate limit exceeded" }, kind: RateLimitError, headers: { "retry-after": "7" } },
  { status: 500, body: { code: 8000, message: "Internal error (reference 1f2e)" }, kind: ServerError },
];

for (const { status, body, kind, headers } of ERRORS) {
  test(`a ${status} is a ${kind.name} with the API's code ${body.code} and message`, async () => {
    const api = new FakeApi().answer({ status, body, headers: headers ?? {} });
    await assert.rejects(client(api).start({ flowType: "mobile", phoneNumber: "+12025550111" }), (error: unknown) => {
      assert.ok(error instanceof kind);
      assert.ok(error instanceof PhoneIdError);
      assert.equal(error.status, status);
      assert.equal(error.code, body.code);
      assert.equal(error.message, body.message);
      return true;
    });
  });
}

test("an error carries the echoed ids, the next step and Retry-After", async () => {
  const api = new FakeApi().answer(
    { status: 403, body: ERRORS[1]?.body },
    { status: 400, body: ERRORS[0]?.body },
    { status: 429, body: ERRORS[5]?.body, headers: { "retry-after": "7" } },
  );
  const phoneid = client(api);
  const replay = await phoneid.validate({ correlationId: "c-1" }).catch((error: unknown) => error);
  assert.ok(replay instanceof PermissionDeniedError);
  assert.equal(replay.correlationId, "c-1");
  assert.deepEqual(replay.next, { "v3-challenge": "/v3/challenge" });
  const invalid = await phoneid.validate({ correlationId: "c-1" }).catch((error: unknown) => error);
  assert.ok(invalid instanceof BadRequestError);
  assert.equal(invalid.clientRequestId, "r-1");
  const limited = await phoneid.validate({ correlationId: "c-1" }).catch((error: unknown) => error);
  assert.ok(limited instanceof RateLimitError);
  assert.equal(limited.retryAfter, 7);
});

test("an answer that is not the API's error body is still a typed error", async () => {
  const api = new FakeApi().answer({ status: 502, body: "<html>Bad Gateway</html>" });
  await assert.rejects(client(api).validate({ correlationId: "c" }), (error: unknown) => {
    assert.ok(error instanceof ServerError);
    assert.equal(error.status, 502);
    assert.equal(error.code, undefined);
    return true;
  });
});

test("the Idempotency-Key is sent when given, and only then", async () => {
  const api = new FakeApi();
  const phoneid = client(api);
  await phoneid.enrollIdentity({ phoneNumber: "+12025550123" }, { idempotencyKey: "8e03978e-40d5-43e8-bc93-6894a57f9324" });
  await phoneid.enrollIdentity({ phoneNumber: "+12025550123" });
  const [keyed, plain] = api.calls();
  assert.equal(keyed?.headers["idempotency-key"], "8e03978e-40d5-43e8-bc93-6894a57f9324");
  assert.equal(plain?.headers["idempotency-key"], undefined);
  assert.equal(keyed?.headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(keyed?.body ?? ""), { phoneNumber: "+12025550123" });
});

test("every method calls its route: the path, its id escaped, and the query", async () => {
  const api = new FakeApi();
  const phoneid = client(api);
  const id = "551ef735-5d2e-4c45-b080-c25a128913b3";
  const calls: Record<keyof typeof ROUTES, () => Promise<unknown>> = {
    start: () => phoneid.start({ flowType: "mobile", phoneNumber: "+12025550111" }),
    validate: () => phoneid.validate({ correlationId: "c" }),
    challenge: () => phoneid.challenge({ correlationId: "c", dob: "1999-08-08" }),
    complete: () => phoneid.complete({ correlationId: "c", individual: {} }),
    unify: () => phoneid.unify({ possessionType: "mobile", phoneNumber: "+12025550101" }),
    unifyStatus: () => phoneid.unifyStatus({ correlationId: "c" }),
    unifyBind: () => phoneid.unifyBind({ correlationId: "c" }),
    revokeDevice: () => phoneid.revokeDevice({ deviceId: "device-0042" }),
    verify: () => phoneid.verify({ phoneNumber: "+12025550112", verificationType: "humanAssurance" }),
    verifyBatch: () => phoneid.verifyBatch({ items: [{ phoneNumber: "+12025550112", verificationType: "humanAssurance" }] }),
    listIdentities: () => phoneid.listIdentities({ limit: 2, showInactive: true }),
    enrollIdentity: () => phoneid.enrollIdentity({ phoneNumber: "+12025550123" }),
    enrollIdentities: () => phoneid.enrollIdentities({ items: [{ phoneNumber: "+12025550123" }] }),
    getIdentity: () => phoneid.getIdentity(id, { clientRequestId: "req-1" }),
    disenrollIdentity: () => phoneid.disenrollIdentity(id),
    activateIdentity: () => phoneid.activateIdentity(id),
    deactivateIdentity: () => phoneid.deactivateIdentity(id, { clientRequestId: "req-2" }),
    lookupIdentities: () => phoneid.lookupIdentities("+12025550123"),
    listDecisions: () => phoneid.listDecisions({ kind: "verify", limit: 100 }).next(),
    getDecision: () => phoneid.getDecision(`${id}#3`),
    summariseDecisions: () => phoneid.summariseDecisions({ from: "2026-11-01", to: "2026-11-30" }),
    eraseDecisions: () => phoneid.eraseDecisions("+12025550123", { clientRequestId: "req-3" }),
  };
  for (const call of Object.values(calls)) await call();
  const made = api.calls().map((sent) => `${sent.method} ${sent.url.slice(BASE.length)}`);
  assert.deepEqual(made, [
    "POST /v3/start",
    "POST /v3/validate",
    "POST /v3/challenge",
    "POST /v3/complete",
    "POST /v3/unify",
    "POST /v3/unify-status",
    "POST /v3/unify-bind",
    "POST /v3/device/revoke",
    "POST /v3/verify",
    "POST /v3/verify/batch",
    "GET /v3/identity?limit=2&showInactive=true",
    "POST /v3/identity",
    "POST /v3/identity/batch",
    `GET /v3/identity/${id}?clientRequestId=req-1`,
    `DELETE /v3/identity/${id}`,
    `POST /v3/identity/${id}/activate`,
    `POST /v3/identity/${id}/deactivate`,
    "GET /v3/identity/%2B12025550123/lookup",
    "GET /v3/decisions?kind=verify&limit=100",
    `GET /v3/decisions/${id}%233`,
    "GET /v3/decisions/summary?from=2026-11-01&to=2026-11-30",
    "DELETE /v3/decisions?phoneNumber=%2B12025550123&clientRequestId=req-3",
  ]);
  const bodies = api.calls().filter((sent) => sent.method !== "POST").map((sent) => sent.body);
  assert.deepEqual(bodies, Array(8).fill(undefined));
});
