/**
 * Identity Manager: enroll a number, read the identity, look the number up, pause and resume its
 * monitoring, disenroll it; the identity is then gone (a NotFoundError, 404/8011).
 */
import { randomUUID } from "node:crypto";

import { NotFoundError } from "@phoneid/server";

import { check, client, run } from "./config.js";

run(async () => {
  const phoneid = client();
  const phoneNumber = "+12025550123";
  const customer = `example-${randomUUID().slice(0, 8)}`;
  const enrolled = await phoneid.enrollIdentity(
    { phoneNumber, clientCustomerId: customer, firstName: "Ada", lastName: "Lovelace" },
    { idempotencyKey: randomUUID() },
  );
  const { serviceId } = enrolled;
  console.log(`enroll: serviceId ${serviceId}`);

  const identity = await phoneid.getIdentity(serviceId);
  console.log(`get: ${identity.phoneNumber} active ${identity.active}, customer ${identity.clientCustomerId}`);
  check(identity.clientCustomerId === customer, "another identity came back");

  const found = await phoneid.lookupIdentities(phoneNumber);
  const items = found.items ?? []; // lists are left out of answers when empty (docs/api.md, Conventions)
  const ids = items.map((item) => item.serviceId);
  console.log(`lookup: ${items.length} identities of ${phoneNumber}, ours among them: ${ids.includes(serviceId)}`);
  check(ids.includes(serviceId), "the lookup missed the identity");

  await phoneid.deactivateIdentity(serviceId);
  const paused = await phoneid.getIdentity(serviceId);
  await phoneid.activateIdentity(serviceId, { clientRequestId: "example-activate" });
  console.log(`deactivate, activate: active ${paused.active} then ${(await phoneid.getIdentity(serviceId)).active}`);

  const removed = await phoneid.disenrollIdentity(serviceId);
  console.log(`disenroll: success ${removed.success}`);
  try {
    await phoneid.getIdentity(serviceId);
    throw new Error("a disenrolled identity was answered");
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    console.log(`get again: ${error.name} ${error.status}/${error.code}: ${error.message}`);
  }
});
