/**
 * The staged flow with the Sandbox's token-only user, Kira Petrova (+12025550111): possession has
 * passed at start, so the four server calls run with no phone (docs/sandbox.md).
 * Then the same session once more, to show a typed error: the replayed step is a 403, code 8003.
 */
import { randomUUID } from "node:crypto";

import { PermissionDeniedError } from "@phoneid/server";

import { check, client, run } from "./config.js";

run(async () => {
  const phoneid = client();
  const started = await phoneid.start(
    { flowType: "mobile", phoneNumber: "+12025550111" },
    { idempotencyKey: randomUUID() },
  );
  console.log(`start: correlationId ${started.correlationId}, next ${Object.keys(started.next ?? {}).join()}`);
  const { correlationId } = started;

  const validated = await phoneid.validate({ correlationId });
  console.log(`validate: success ${validated.success}, challengeMissing ${validated.challengeMissing}`);
  check(validated.success, "possession did not pass");

  const challenged = await phoneid.challenge({ correlationId, dob: "1999-08-08" });
  const person = challenged.individual;
  console.log(`challenge: success ${challenged.success}, ${person?.firstName} ${person?.lastName}`);
  check(challenged.success && person !== undefined && person !== null, "the challenge did not match");

  const completed = await phoneid.complete({
    correlationId,
    individual: { firstName: person?.firstName, lastName: person?.lastName, ssn: person?.ssn },
  });
  console.log(`complete: success ${completed.success}, next ${Object.keys(completed.next ?? {}).join()}`);
  check(completed.success, "complete did not pass");

  try {
    await phoneid.validate({ correlationId });
    throw new Error("a replayed validate was answered");
  } catch (error) {
    if (!(error instanceof PermissionDeniedError)) throw error;
    console.log(`validate again: ${error.name} ${error.status}/${error.code}: ${error.message}`);
  }
});
