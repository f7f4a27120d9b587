/**
 * Decision records: verify Lena Ortiz, then a batch of her and a number no Sandbox user has; list
 * the client's records of her number (every page), read the other item's whole by its id (it holds
 * a `#`), count the last 30 days, and erase her records; reading one afterwards is a NotFoundError.
 */
import { type DecisionSummaryItem, NotFoundError } from "@phoneid/server";

import { check, client, run } from "./config.js";

const LENA = "+12025550112";
const NOBODY = "+12025550199"; // no Sandbox user: the batch answers an error for it

run(async () => {
  const phoneid = client();
  await phoneid.verify({ phoneNumber: LENA, verificationType: "humanAssurance" });
  const batch = await phoneid.verifyBatch({
    items: [
      { phoneNumber: LENA, verificationType: "humanAssurance" },
      { phoneNumber: NOBODY, verificationType: "humanAssurance" },
    ],
  });
  console.log(`verify, verify/batch: ${1 + (batch.results ?? []).length} decisions`);

  // Two a page, to show the iterator going through the pages: the SDK asks for each in turn
  const lenas: DecisionSummaryItem[] = [];
  for await (const record of phoneid.listDecisions({ phoneNumber: LENA, limit: 2 })) lenas.push(record);
  const kinds = lenas.map((record) => `${record.kind} ${record.outcome}`).join(", ");
  console.log(`list: ${lenas.length} records of the number ending ${LENA.slice(-2)}, newest first: ${kinds}`);

  // A batch item's record: its id is the batch's, `#` and the item's index (sent as %23)
  const [lenaItem, nobodyItem] = [`${batch.correlationId}#0`, `${batch.correlationId}#1`];
  check(lenas[0]?.id === lenaItem, "Lena's batch item is not her newest record");
  const item = await phoneid.getDecision(nobodyItem);
  console.log(`get: ${item.kind} ${item.outcome} (code ${item.errorCode}), number ..${item.number?.lastTwo}, tier ${item.tier}`);

  const summary = await phoneid.summariseDecisions();
  const byKind = Object.entries(summary.byKind ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, count]) => `${kind} ${count}`)
    .join(", ");
  console.log(
    `summary: ${summary.total} decisions, ${summary.passed} passed, ${summary.failed} failed, ` +
      `${summary.errors} errors; ${byKind}`,
  );

  const { erased } = await phoneid.eraseDecisions(LENA);
  console.log(`erase: ${erased} records of the number`);
  try {
    await phoneid.getDecision(lenaItem);
    throw new Error("an erased record was answered");
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    console.log(`get Lena's item: ${error.name} ${error.status}/${error.code}: ${error.message}`);
  }
});
