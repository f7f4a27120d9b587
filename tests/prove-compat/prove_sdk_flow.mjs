// Prove's published TypeScript SDK (@prove-identity/prove-api, the version this folder's package.json
// pins; licence CC BY-NC-ND 4.0, so installed only by the opt-in `make prove-compat`), unmodified,
// against a PhoneID stack: its server URL is the stack's, its client credentials
// a client of the stack. Prints one line per call ("ok <call>: ..." or "differs <call>: ...") and
// exits non-zero when a call PhoneID serves as that SDK expects fails.
// Usage: PHONEID_BASE_URL=... PHONEID_CLIENT_ID=... PHONEID_CLIENT_SECRET=... node prove_sdk_flow.mjs
// Where that SDK version and PhoneID's contract differ: docs/adr/0107-the-typescript-server-sdk.md.
import { Proveapi } from "@prove-identity/prove-api";

const serverURL = process.env.PHONEID_BASE_URL;
const clientID = process.env.PHONEID_CLIENT_ID;
const clientSecret = process.env.PHONEID_CLIENT_SECRET;
if (!serverURL || !clientID || !clientSecret) {
  console.error("set PHONEID_BASE_URL, PHONEID_CLIENT_ID and PHONEID_CLIENT_SECRET");
  process.exit(2);
}

// The SDK fetches its token itself (client credentials at /token, its default tokenURL) before the
// first call, and again after a 401.
const sdk = new Proveapi({ serverURL, security: { clientID, clientSecret } });
let failed = false;

function ok(call, detail) {
  console.log(`ok ${call}: ${detail}`);
}

function fail(call, detail) {
  failed = true;
  console.log(`FAILED ${call}: ${detail}`);
}

/** A call the SDK makes and PhoneID must answer as the SDK expects. */
async function expect(call, attempt) {
  try {
    return await attempt();
  } catch (error) {
    fail(call, `${error?.name}: ${String(error?.message).slice(0, 300)}`);
    return undefined;
  }
}

/** A call PhoneID must refuse with this error class and code. */
async function expectError(call, attempt, name, code) {
  try {
    await attempt();
    fail(call, "answered; expected an error");
  } catch (error) {
    error?.name === name && error.code === code
      ? ok(call, `${name} ${code}: ${error.message}`)
      : fail(call, `${error?.name} ${error?.code}: ${String(error?.message).slice(0, 300)}`);
  }
}

/** A call where this SDK version and PhoneID's contract are known to differ, in exactly this way. */
async function expectDifference(call, attempt, isTheKnownDifference) {
  try {
    await attempt();
    fail(call, "answered as the SDK expects: the recorded difference is gone, update the ADR");
  } catch (error) {
    isTheKnownDifference(error)
      ? console.log(`differs ${call}: ${error.name}${error.code ? ` ${error.code}` : ""}`)
      : fail(call, `${error?.name} ${error?.code}: ${String(error?.message).slice(0, 300)}`);
  }
}

// The token, asked for explicitly as the SDK's v3TokenRequest sends it.
const token = await expect("token", () =>
  sdk.v3.v3TokenRequest({ grantType: "client_credentials", clientId: clientID, clientSecret }),
);
if (token) {
  const answer = token.v3TokenResponse;
  answer?.accessToken && answer.tokenType === "Bearer" && answer.expiresIn > 0
    ? ok("token", `tokenType ${answer.tokenType}, expiresIn ${answer.expiresIn}`)
    : fail("token", JSON.stringify(answer));
}

// The staged flow with the Sandbox's token-only user (possession passed at start): as Prove's README
// walks it, start → validate → challenge → complete.
const started = await expect("start", () =>
  sdk.v3.v3StartRequest({ flowType: "mobile", phoneNumber: "+12025550111", finalTargetUrl: "https://example.com" }),
);
const correlationId = started?.v3StartResponse?.correlationId;
if (correlationId && started.v3StartResponse.authToken && "v3-validate" in started.v3StartResponse.next) {
  ok("start", `correlationId ${correlationId}, next ${Object.keys(started.v3StartResponse.next)}`);
} else if (started) {
  fail("start", JSON.stringify(started.v3StartResponse));
}

if (correlationId) {
  const validated = (await expect("validate", () => sdk.v3.v3ValidateRequest({ correlationId })))?.v3ValidateResponse;
  if (validated?.success && validated.challengeMissing && "v3-challenge" in validated.next) {
    ok("validate", `success ${validated.success}, challengeMissing ${validated.challengeMissing}, phoneNumber ${validated.phoneNumber}`);
  } else if (validated) {
    fail("validate", JSON.stringify(validated));
  }

  const challenged = (await expect("challenge", () => sdk.v3.v3ChallengeRequest({ correlationId, dob: "1999-08-08" })))
    ?.v3ChallengeResponse;
  const individual = challenged?.individual;
  if (challenged?.success && individual?.firstName === "Kira" && "v3-complete" in challenged.next) {
    ok("challenge", `success ${challenged.success}, individual ${individual.firstName} ${individual.lastName}`);
  } else if (challenged) {
    fail("challenge", JSON.stringify(challenged));
  }

  const completed = (
    await expect("complete", () =>
      sdk.v3.v3CompleteRequest({
        correlationId,
        individual: {
          firstName: individual?.firstName,
          lastName: individual?.lastName,
          dob: individual?.dob,
          ssn: individual?.ssn,
          addresses: individual?.addresses,
          emailAddresses: individual?.emailAddresses,
        },
      }),
    )
  )?.v3CompleteResponse;
  if (completed?.success && "done" in completed.next) {
    ok("complete", `success ${completed.success}, next ${Object.keys(completed.next)}`);
  } else if (completed) {
    fail("complete", JSON.stringify(completed));
  }
}

// The API's errors reach the SDK's error classes with their code: a replayed step is 403/8003, a
// number no Sandbox user has 400/8007.
await expectError("validate again", () => sdk.v3.v3ValidateRequest({ correlationId }), "Error403", 8003);
await expectError("start, unknown user", () => sdk.v3.v3StartRequest({ flowType: "mobile", phoneNumber: "+12025550199" }), "ErrorT", 8007);

// Where this SDK version and PhoneID's contract differ (SPEC, docs/api.md), the difference is pinned
// here, so that any other change shows: docs/adr/0107-the-typescript-server-sdk.md#proves-published-sdk.
// unify: PhoneID answers success "pending" (a string, as SPEC says); this version's schema has an
// untyped object there, which its validation refuses.
await expectDifference("unify", () => sdk.v3.v3UnifyRequest({ possessionType: "mobile", phoneNumber: "+12025550101" }),
  (error) => error?.name === "SDKValidationError" && /V3UnifyResponse[\s\S]*success[\s\S]*Expected object, received string/.test(error.message));
// verify: this version sends the Verified Users session of its day (possessionType, no
// verificationType); PhoneID's /v3/verify is the later one of SPEC, which refuses that body.
await expectDifference("verify", () => sdk.v3.v3VerifyRequest({ phoneNumber: "+12025550112", firstName: "Lena", lastName: "Ortiz", possessionType: "mobile" }),
  (error) => error?.name === "ErrorT" && error.code === 8001 && /verificationType/.test(error.message));
// verify-status: not in SPEC; PhoneID serves no such path (API Gateway's 403/8001).
await expectDifference("verify-status", () => sdk.v3.v3VerifyStatusRequest({ correlationId }),
  (error) => error?.name === "Error403" && error.code === 8001);

if (failed) process.exitCode = 1;
