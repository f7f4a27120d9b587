/**
 * Verify: Lena Ortiz (+12025550112) passes as a Verified User and is enrolled in Identity Manager;
 * a batch of her and a number no Sandbox user has gives one result per item (docs/verify.md).
 */
import { randomUUID } from "node:crypto";

import { check, client, run } from "./config.js";

run(async () => {
  const phoneid = client();
  const lena = { phoneNumber: "+12025550112", firstName: "Lena", lastName: "Ortiz" };
  const verified = await phoneid.verify(
    { ...lena, verificationType: "verifiedUser", clientCustomerId: "example-lena" },
    { idempotencyKey: randomUUID() },
  );
  const label = verified.signals?.[0]?.["verifiedUser"]?.champion.label;
  console.log(
    `verify: success ${verified.success}, assurance ${verified.identity?.assuranceLevel}, ` +
      `label ${label}, enrolled ${verified.isEnrolled}`,
  );
  check(verified.success === "true", "Lena did not pass");

  const batch = await phoneid.verifyBatch({
    items: [
      { ...lena, verificationType: "verifiedUser" },
      { phoneNumber: "+12025550199", verificationType: "humanAssurance" },
    ],
  });
  const results = batch.results ?? [];
  for (const result of results) {
    console.log(`verify/batch: ${result.phoneNumber} success ${result.success}${result.error ? `, error ${result.error}` : ""}`);
  }
  check(results.length === 2, "the batch did not answer each item");
});
