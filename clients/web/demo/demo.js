// The demo integrator's page: builds the authenticator and supplies the steps the SDK asks for.
import { AuthenticatorBuilder, isMobileWeb } from "/sdk/phoneid.js";

const $ = (id) => document.getElementById(id);
// The server says what the stack is: its tier and region decide the number to prefill and
// whether there are Sandbox test users to pick from.
const config = await (await fetch("/demo/api/config")).json();

let flow = null; // the running check: {authToken, api}
let pendingNumber = null; // a new number typed before the SDK asks for it
let numberChangeCancelled = false;
let lastOtpAction = "send";
const pendingChoices = new Set();

function show(id, visible) {
  $(id).hidden = !visible;
}

// The one line saying what is going on: progress, or the error that stopped it.
function status(text, kind = "") {
  $("status").textContent = text;
  $("status").className = kind;
}

function plural(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

// Resolves with the value of whichever button the customer presses; forgotten when the check ends.
function choice(buttons) {
  return new Promise((resolve) => {
    const remove = () => {
      handlers.forEach(([id, handler]) => $(id).removeEventListener("click", handler));
      pendingChoices.delete(remove);
    };
    const handlers = buttons.map(([id, value]) => {
      const handler = () => {
        remove();
        resolve(typeof value === "function" ? value() : value);
      };
      $(id).addEventListener("click", handler);
      return [id, handler];
    });
    pendingChoices.add(remove);
  });
}

// --- the stack and its test users ---------------------------------------------------------------

function fill(person) {
  $("phone").value = person.phoneNumber || "";
  $("dob").value = person.dob || "";
  $("first-name").value = person.firstName || "";
  $("last-name").value = person.lastName || "";
  // A list entry is cut at the list's width: the picked user's scenario is shown whole below it.
  $("user-description").textContent = person.description || "";
  show("user-description", Boolean(person.description));
}

let testUsers = new Map(); // phone number -> the Sandbox test user

// The number the check runs for changed (typed, or changed mid-check): its test user's details, or
// none, since the previous number's date of birth and name would fail the new number's challenge.
function numberIs(phoneNumber) {
  const user = testUsers.get(phoneNumber.trim());
  fill(user ? { ...user, phoneNumber } : { phoneNumber });
  if (config.testUsers.length > 0) $("user").value = user ? user.phoneNumber : "";
}

function option(value, text) {
  const element = document.createElement("option");
  element.value = value;
  element.textContent = text;
  return element;
}

function setUpPicker(users) {
  const byNumber = new Map(users.map((user) => [user.phoneNumber, user]));
  testUsers = byNumber;
  const possession = document.createElement("optgroup");
  possession.label = "Possession and device keys";
  const signals = document.createElement("optgroup");
  signals.label = "Fraud signals (complete fails with the reason)";
  for (const user of users) {
    const label = `${user.firstName} ${user.lastName}, ${user.phoneNumber}: ${user.description}`;
    (user.scenario === "fraud-signal" ? signals : possession).append(option(user.phoneNumber, label));
  }
  $("user").append(option("", "another number (type it below)"), possession, signals);
  $("user").addEventListener("change", () => {
    const user = byNumber.get($("user").value);
    if (user) fill(user);
  });
  // A number typed by hand selects its test user and fills the rest; a number of no test user
  // drops the previous user's date of birth and name, which would fail the new number's check.
  $("phone").addEventListener("input", () => {
    if (byNumber.has($("phone").value.trim()) || $("user").value) numberIs($("phone").value);
  });
  show("user-picker", true);
}

const sandbox = config.tier === "sandbox";
$("stack").textContent = `${sandbox ? "Sandbox" : "production"} tier, ${config.region} region`;
show("hint-sandbox", sandbox);
show("hint-production", !sandbox);
if (config.testUsers.length > 0) setUpPicker(config.testUsers);
// A number of the stack's own region (another region's host refuses it with 8010), unless the
// visitor already typed one while the page was loading.
if (!$("phone").value) {
  if (config.testUsers.length > 0) numberIs(config.prefill.phoneNumber);
  else fill(config.prefill);
}
$("flow").options[0].textContent = `automatic (this device: ${isMobileWeb() ? "mobile" : "desktop"})`;
$("budget-origin").textContent = location.origin;
$("budget-limits").textContent =
  `${config.smsBudget.perNumber} SMS per number and ${config.smsBudget.perClient} per client in an hour`;

// --- the client API's view of the running check (entries and sends left) ----------------------

function claimsOf(authToken) {
  const payload = authToken.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
  return JSON.parse(atob(payload + "=".repeat((4 - (payload.length % 4)) % 4)));
}

async function sessionView() {
  if (!flow) return null;
  try {
    const response = await fetch(`${flow.api}/client/v1/session`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${flow.authToken}` },
      body: "{}",
    });
    return response.ok ? await response.json() : null;
  } catch {
    return null; // the page still works without the counts
  }
}

// --- the SMS budget -----------------------------------------------------------------------------

function isSmsBudget(error) {
  return Number(error?.code) === 8018 && /SMS budget/i.test(error?.message || "");
}

function offerBudgetReset() {
  $("budget-reset").disabled = Boolean(flow); // moving the clock mid-check would expire it
  show("budget", true);
}

$("budget-reset").addEventListener("click", async () => {
  const response = await fetch("/_local/clock", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ advanceSeconds: 3600 }),
  });
  if (response.ok) {
    show("budget", false);
    status("The stack's clock moved one hour forward: the SMS budgets start afresh. Press Verify to try again.");
  } else {
    status(`Could not move the clock: ${(await response.json().catch(() => ({}))).message || response.status}`, "failed");
  }
});

// --- the steps the SDK asks for -----------------------------------------------------------------

// Asks for a new number; resolves with it, or null when the customer cancels.
async function numberForm(refused) {
  show("otp", false);
  show("link", false);
  show("number", true);
  if (refused) {
    status(`That number was refused: ${refused.message}`, "failed");
  } else {
    $("new-phone").value = "";
    status("Enter the new number.");
  }
  $("new-phone").focus();
  const phoneNumber = await choice([
    ["number-submit", () => $("new-phone").value.trim()],
    ["number-cancel", null],
  ]);
  show("number", false);
  if (phoneNumber) numberIs(phoneNumber);
  return phoneNumber;
}

// OTP and Instant Link start step: a number only when the SDK needs one (first time or a change).
async function askNumber(phoneNumberNeeded, phoneValidationError) {
  if (!phoneNumberNeeded) return null;
  if (pendingNumber !== null && !phoneValidationError) {
    const phoneNumber = pendingNumber;
    pendingNumber = null;
    return { phoneNumber };
  }
  pendingNumber = null;
  const phoneNumber = await numberForm(phoneValidationError);
  if (phoneNumber === null) {
    // The SDK takes a rejected start step as a cancellation; it is not an error of the check.
    numberChangeCancelled = true;
    throw new Error("The number change was cancelled");
  }
  status("Sending…");
  return { phoneNumber };
}

// "The code is not correct. 2 code entries left."
function describeOtpError(otpError, session) {
  const code = typeof otpError.code === "number" ? ` (${otpError.code})` : ""; // not "otp-invalid"
  const entriesLeft = session?.otp?.entriesLeft;
  const left = typeof entriesLeft === "number" ? ` ${plural(entriesLeft, "code entry", "code entries")} left.` : "";
  return `${String(otpError.message).replace(/\.$/, "")}${code}.${left}`;
}

async function otpFinish(otpError) {
  const session = await sessionView();
  const sendsLeft = session?.otp?.sendsLeft;
  $("otp-resend").disabled = sendsLeft === 0;
  $("otp-change").disabled = sendsLeft === 0 || session?.numberChangeAllowed === false;
  if (numberChangeCancelled) {
    numberChangeCancelled = false;
    status("Number change cancelled: enter the code we texted before.");
  } else if (otpError) {
    status(describeOtpError(otpError, session), "failed");
    if (isSmsBudget(otpError)) offerBudgetReset();
  } else if (lastOtpAction !== "send") {
    status("We texted you a new code.");
  } else if (session?.mobileAuth?.status === "failed") {
    status("Mobile Auth did not recognise this phone, so we texted you a code instead.");
  } else {
    status("We texted you a code.");
  }
  $("otp-code").value = "";
  for (;;) {
    show("otp", true);
    $("otp-code").focus();
    const picked = await choice([
      ["otp-submit", () => ({ input: { otp: $("otp-code").value.trim() }, resultType: 0 })],
      ["otp-resend", { resultType: 1 }],
      ["otp-change", "change"],
    ]);
    show("otp", false);
    if (picked !== "change") {
      lastOtpAction = picked.resultType === 0 ? lastOtpAction : "resend";
      status(picked.resultType === 0 ? "Checking the code…" : "Sending a new code…");
      return picked;
    }
    const phoneNumber = await numberForm();
    if (phoneNumber !== null) {
      pendingNumber = phoneNumber;
      lastOtpAction = "change";
      status("Sending a code to the new number…");
      return { resultType: 2 };
    }
    status("Number change cancelled: enter the code we texted before.");
  }
}

// Called once the link is sent: the page waits for it, or the customer asks again.
async function linkRetry() {
  let note = "Waiting for you to open the link on your phone…";
  for (;;) {
    show("link", true);
    status(note);
    const picked = await choice([
      ["link-resend", "resend"],
      ["link-change", "change"],
    ]);
    show("link", false);
    if (picked === "resend") {
      status("Sending a new link…");
      return 0;
    }
    const phoneNumber = await numberForm();
    if (phoneNumber !== null) {
      pendingNumber = phoneNumber;
      status("Sending the link to the new number…");
      return 1;
    }
    note = "Number change cancelled: open the link we texted before. Waiting…";
  }
}

// --- the outcome --------------------------------------------------------------------------------

function evaluationReasons(evaluation) {
  return Object.entries(evaluation || {}).flatMap(([category, verdict]) =>
    Object.entries(verdict?.failureReasons || {}).map(([code, meaning]) => ({ code, meaning, category })),
  );
}

function possessionReason(possession, session) {
  if (possession === "pending") return "The phone check did not finish: the link or code was not used in time.";
  return (
    {
      "otp-invalid": "The phone check failed: the code was not correct.",
      "mobile-auth-failed": "The phone check failed: Mobile Auth did not recognise this phone.",
    }[session?.lastError] || "The phone check did not pass."
  );
}

// Whether the check passed, and why not: the evaluation's reasons as returned, or the failed step.
function outcome(steps, possession, session) {
  const failedCall = (answer) => ({ passed: false, reasons: [{ code: String(answer.code), meaning: answer.message }] });
  if (steps.unifyStatus) {
    const answer = steps.unifyStatus;
    if (answer.code) return failedCall(answer);
    return { passed: answer.success === true, reasons: evaluationReasons(answer.evaluation) };
  }
  if (steps.validate?.code) return failedCall(steps.validate);
  if (steps.validate?.success !== true) {
    return { passed: false, reasons: [{ meaning: possessionReason(possession, session) }] };
  }
  if (steps.challenge?.code) return failedCall(steps.challenge);
  if (steps.challenge && steps.challenge.success !== true) {
    return {
      passed: false,
      reasons: [{ meaning: "The date of birth does not match the records of this number (challenge)." }],
    };
  }
  if (!steps.complete) return { passed: false, reasons: [{ meaning: "The check ended before complete." }] };
  if (steps.complete.code) return failedCall(steps.complete);
  return { passed: steps.complete.success === true, reasons: evaluationReasons(steps.complete.evaluation) };
}

function showReasons(reasons) {
  $("reasons").replaceChildren(
    ...reasons.map(({ code, meaning, category }) => {
      const item = document.createElement("li");
      if (code) {
        const codeElement = document.createElement("code");
        codeElement.textContent = code;
        item.append(codeElement, " ");
      }
      item.append(meaning || "");
      if (category) {
        const categoryElement = document.createElement("span");
        categoryElement.className = "category";
        categoryElement.textContent = ` (${category})`;
        item.append(categoryElement);
      }
      return item;
    }),
  );
  show("reasons", reasons.length > 0);
}

async function finish(input = {}) {
  show("otp", false);
  show("link", false);
  show("number", false);
  status("Checking the result…");
  const session = input.status === "passed" ? null : await sessionView();
  const response = await fetch("/demo/api/finish", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    // The details as the page shows them now: a number changed mid-check changed them.
    body: JSON.stringify({
      authId: input.authId,
      dob: $("dob").value.trim(),
      firstName: $("first-name").value,
      lastName: $("last-name").value,
    }),
  });
  const steps = await response.json().catch(() => ({}));
  if (!response.ok) {
    status(`Could not finish: ${steps.message || `HTTP ${response.status}`}`, "failed");
    return steps;
  }
  $("result").textContent = JSON.stringify(steps, null, 2);
  show("result", true);
  const { passed, reasons } = outcome(steps, input.status, session);
  status(passed ? "Verified ✔" : "Not verified ✘", passed ? "passed" : "failed");
  showReasons(passed ? [] : reasons);
  const deviceId = steps.unifyStatus?.deviceId;
  $("revoke").dataset.deviceId = deviceId || "";
  show("revoke", Boolean(deviceId));
  return steps;
}

$("revoke").addEventListener("click", async () => {
  const response = await fetch("/demo/api/revoke", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ deviceId: $("revoke").dataset.deviceId }),
  });
  status(response.ok ? "Key revoked: the next unified check on this device gets 8019" : "Could not revoke");
  show("revoke", false);
});

// One authenticator per role, built at page load: the flow picked on the page is the one run, on a
// phone or a desktop alike (a unified flow's client says which it runs by its role).
function authenticatorFor(role) {
  return new AuthenticatorBuilder()
    .withAuthFinishStep(finish)
    .withMobileAuthImplementation("fetch")
    .withOtpFallback(askNumber, otpFinish)
    .withInstantLinkFallback(askNumber, linkRetry)
    .withRole(role)
    .withDeviceContext({ publicApiKey: config.publicApiKey, buildConfig: { keyPersistence: true } })
    .build();
}
const authenticators = { mobile: authenticatorFor("primary"), desktop: authenticatorFor("secondary") };

async function check() {
  const chosen = $("flow").value;
  const flowType = chosen === "auto" ? (isMobileWeb() ? "mobile" : "desktop") : chosen;
  status("Starting…");
  const response = await fetch("/demo/api/start", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      api: $("api").value,
      flowType,
      phoneNumber: $("phone").value.trim(),
      dob: $("dob").value.trim(),
      firstName: $("first-name").value,
      lastName: $("last-name").value,
      allowOTPRetry: $("retry").checked,
    }),
  });
  const started = await response.json().catch(() => ({}));
  if (!response.ok) {
    status(`Could not start: ${started.message || `HTTP ${response.status}`}${started.code ? ` (${started.code})` : ""}`, "failed");
    return;
  }
  flow = { authToken: started.authToken, api: claimsOf(started.authToken).api.replace(/\/$/, "") };
  lastOtpAction = "send";
  status(flowType === "mobile" ? "Checking your phone…" : "Sending you a link…");
  try {
    await authenticators[flowType].authenticate(started.authToken);
  } catch (error) {
    if (numberChangeCancelled) {
      status("Number change cancelled: this check stopped. Press Verify to start again.");
    } else {
      status(`Stopped: ${error.message}${error.code ? ` (${error.code})` : ""}`, "failed");
      if (isSmsBudget(error)) offerBudgetReset();
    }
  }
}

$("start").addEventListener("submit", async (event) => {
  event.preventDefault();
  if ($("verify").disabled) return;
  // One check at a time: a second one would take the first one's place at the finish step.
  $("verify").disabled = true;
  for (const id of ["result", "reasons", "budget", "revoke", "otp", "link", "number"]) show(id, false);
  numberChangeCancelled = false;
  pendingNumber = null;
  try {
    await check();
  } catch (error) {
    status(`Stopped: ${error.message}`, "failed");
  } finally {
    pendingChoices.forEach((remove) => remove());
    for (const id of ["otp", "link", "number"]) show(id, false);
    flow = null;
    numberChangeCancelled = false;
    $("budget-reset").disabled = false;
    $("verify").disabled = false;
  }
});
$("verify").disabled = false; // ready: the page knows its stack
