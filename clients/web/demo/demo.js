// The demo integrator's page: builds the authenticator and supplies the steps the SDK asks for.
import { AuthenticatorBuilder, isMobileWeb } from "/sdk/phoneid.js";

const $ = (id) => document.getElementById(id);
const { publicApiKey } = await (await fetch("/demo/api/config")).json();
$("device").textContent = isMobileWeb() ? "mobile" : "desktop";

function show(id, visible) {
  $(id).hidden = !visible;
}

function status(text, kind = "") {
  $("status").textContent = text;
  $("status").className = kind;
}

// Resolves with the value of whichever button the customer presses.
function choice(buttons) {
  return new Promise((resolve) => {
    const handlers = buttons.map(([id, value]) => {
      const handler = () => {
        handlers.forEach(([otherId, otherHandler]) => $(otherId).removeEventListener("click", otherHandler));
        resolve(typeof value === "function" ? value() : value);
      };
      $(id).addEventListener("click", handler);
      return [id, handler];
    });
  });
}

// OTP and Instant Link start step: a number only when the SDK needs one (first time or a change).
async function askNumber(phoneNumberNeeded, phoneValidationError) {
  if (!phoneNumberNeeded) return null;
  show("number", true);
  $("number-error").textContent = phoneValidationError ? phoneValidationError.message : "";
  const phoneNumber = await choice([
    ["number-submit", () => $("new-phone").value],
    ["number-cancel", null],
  ]);
  show("number", false);
  if (phoneNumber === null) throw new Error("The customer cancelled");
  return { phoneNumber };
}

async function otpFinish(otpError) {
  status("");
  show("otp", true);
  $("otp-error").textContent = otpError ? otpError.message : "";
  $("otp-code").value = "";
  $("otp-code").focus();
  const result = await choice([
    ["otp-submit", () => ({ input: { otp: $("otp-code").value }, resultType: 0 })],
    ["otp-resend", { resultType: 1 }],
    ["otp-change", { resultType: 2 }],
  ]);
  show("otp", false);
  status(result.resultType === 0 ? "Checking the code…" : "Sending a new code…");
  return result;
}

async function linkStart(phoneNumberNeeded, phoneValidationError) {
  const number = await askNumber(phoneNumberNeeded, phoneValidationError);
  show("link", true);
  status("Waiting for you to open the link on your phone…");
  return number;
}

function linkRetry() {
  return choice([
    ["link-resend", 0],
    ["link-change", 1],
  ]);
}

async function finish() {
  show("otp", false);
  show("link", false);
  const response = await fetch("/demo/api/finish", { method: "POST" });
  const steps = await response.json();
  $("result").textContent = JSON.stringify(steps, null, 2);
  show("result", true);
  const passed = steps.unifyStatus ? steps.unifyStatus.success === true : steps.complete?.success === true;
  status(passed ? "Verified ✔" : "Not verified ✘", passed ? "passed" : "failed");
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

const authenticator = new AuthenticatorBuilder()
  .withAuthFinishStep(finish)
  .withMobileAuthImplementation("fetch")
  .withOtpFallback(askNumber, otpFinish)
  .withInstantLinkFallback(linkStart, linkRetry)
  .withRole(isMobileWeb() ? "primary" : "secondary")
  .withDeviceContext({ publicApiKey, buildConfig: { keyPersistence: true } })
  .build();

$("start").addEventListener("submit", async (event) => {
  event.preventDefault();
  show("result", false);
  const chosen = $("flow").value;
  const flowType = chosen === "auto" ? (authenticator.isMobileWeb() ? "mobile" : "desktop") : chosen;
  status("Starting…");
  const response = await fetch("/demo/api/start", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      api: $("api").value,
      flowType,
      phoneNumber: $("phone").value,
      dob: $("dob").value,
      allowOTPRetry: $("retry").checked,
    }),
  });
  const started = await response.json();
  if (!response.ok) {
    status(`Could not start: ${started.message} (${started.code})`, "failed");
    return;
  }
  status(flowType === "mobile" ? "Checking your phone…" : "Sending you a link…");
  try {
    await authenticator.authenticate(started.authToken);
  } catch (error) {
    status(`Stopped: ${error.message}${error.code ? ` (${error.code})` : ""}`, "failed");
  }
});
