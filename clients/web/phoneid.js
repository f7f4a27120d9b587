// PhoneID web SDK: runs the possession check in the customer's browser.
//
//   import { AuthenticatorBuilder } from "./phoneid.js";
//   const authenticator = new AuthenticatorBuilder()
//     .withAuthFinishStep((input) => fetch("/finish", {method: "POST", body: JSON.stringify(input)}))
//     .withMobileAuthImplementation("fetch")
//     .withOtpFallback(otpStart, otpFinish)
//     .withInstantLinkFallback(linkStart, linkRetry)
//     .build();
//   const flowType = authenticator.isMobileWeb() ? "mobile" : "desktop";
//   // ...the integrator's server calls /v3/start with flowType and hands back the authToken...
//   await authenticator.authenticate(authToken);
//
// No dependencies. The client API it calls is described in docs/client-api.md.

export const OtpResultType = Object.freeze({ SUCCESS: 0, RESEND: 1, MOBILE_NUMBER_CHANGE: 2 });
export const InstantLinkResultType = Object.freeze({ RESEND: 0, MOBILE_NUMBER_CHANGE: 1 });

export const VERSION = "2.15.1";
const INSTANT_LINK_WAIT_MS = 3 * 60 * 1000;
const POLL_MS = 2000;

export class PhoneIdError extends Error {
  constructor(message, { code, status, body } = {}) {
    super(message);
    this.name = "PhoneIdError";
    this.code = code;
    this.status = status;
    this.body = body;
  }
}

function decodeClaims(authToken) {
  const parts = String(authToken || "").split(".");
  if (parts.length !== 3) throw new PhoneIdError("authToken is not a JWT");
  const base64 = parts[1].replace(/-/g, "+").replace(/_/g, "/");
  const padded = base64 + "=".repeat((4 - (base64.length % 4)) % 4);
  return JSON.parse(atob(padded));
}

export function isMobileWeb(userAgent = globalThis.navigator?.userAgent ?? "") {
  if (globalThis.navigator?.userAgentData?.mobile) return true;
  return /Android|iPhone|iPad|iPod|Mobile|Mobi/i.test(userAgent);
}

class ClientApi {
  constructor(authToken) {
    const claims = decodeClaims(authToken);
    if (!claims.api) throw new PhoneIdError("authToken names no client API");
    this.base = claims.api.replace(/\/$/, "");
    this.authToken = authToken;
    this.claims = claims;
  }

  async call(path, body = {}) {
    const response = await fetch(`${this.base}/client/v1${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${this.authToken}` },
      body: JSON.stringify(body),
    });
    const payload = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw new PhoneIdError(payload.message || `HTTP ${response.status}`, {
        code: payload.code,
        status: response.status,
        body: payload,
      });
    }
    return payload;
  }

  session() {
    return this.call("/session");
  }
}

export class Authenticator {
  constructor(config) {
    this.config = config;
  }

  isMobileWeb() {
    return isMobileWeb();
  }

  // Runs possession for the flow the authToken belongs to, then the auth finish step.
  // Resolves with the finish step's result; rejects when the customer cancels or the flow cannot run.
  async authenticate(authToken) {
    const api = new ClientApi(authToken);
    const atStart = sessionAtStart(api.claims);
    if (atStart) return this.#finish(api, await this.#possessFromStart(api, atStart));
    let session = await api.session();
    if (api.claims.flow === "unify" && session.status === "pending") {
      // A unified flow: this client says which possession it runs. Its role decides (primary: the
      // mobile flow, secondary: the desktop one), whatever the device; with no role, the device.
      const flowType = this.#flowType();
      if (session.flowType !== flowType) session = await api.call("/session", { flowType });
    }
    const keys = this.#keys(api, session);
    if (keys && session.status === "pending") {
      session = await keys.prove(session);
    }
    if (session.status === "pending") {
      session = await this.#possess(api, session);
    }
    if (keys && session.status === "passed" && session.deviceKey?.registerKey) {
      await keys.register(session);
    }
    return this.#finish(api, session);
  }

  #flowType() {
    const { role } = this.config;
    if (role === "primary") return "mobile";
    if (role === "secondary") return "desktop";
    return isMobileWeb() ? "mobile" : "desktop";
  }

  // Device keys for unified flows, when the credentials allow key persistence in browsers.
  #keys(api, session) {
    const publicApiKey = this.config.deviceContext?.publicApiKey;
    if (!session.deviceKey || !publicApiKey || !globalThis.indexedDB || !globalThis.crypto?.subtle) return null;
    return new DeviceKeys(api, publicApiKey);
  }

  async #finish(api, session) {
    const finish = this.config.authFinishStep;
    if (!finish) return session;
    return finish({ authId: api.claims.sub, status: session.status });
  }

  // A staged flow begins with what its authToken says start offered, without a first call for the
  // session. If the flow moved on since (the page was reloaded), the first step is refused with
  // 8003: the session then says where it stands, and possession goes on from there.
  async #possessFromStart(api, atStart) {
    let session;
    try {
      session = await this.#possess(api, atStart);
    } catch (error) {
      if (error.code !== 8003) throw error;
      session = await api.session();
      if (session.status === "pending") session = await this.#possess(api, session);
    }
    return session === atStart ? api.session() : session; // no step ran: the server says the status
  }

  async #possess(api, session) {
    for (const method of session.methods) {
      if (session.status !== "pending") break;
      if (method === "mobile-auth" && this.config.mobileAuthImplementation) {
        session = await this.#mobileAuth(api);
      } else if (method === "otp" && this.config.otpStart) {
        session = await this.#otp(api, session);
      } else if (method === "instant-link" && this.config.instantLinkStart) {
        session = await this.#instantLink(api, session);
      }
    }
    return session;
  }

  async #mobileAuth(api) {
    let session = await api.call("/mobile-auth");
    if (session.mobileAuth?.status === "redirect") {
      // "fetch": the network recognises the SIM on this request's mobile data path.
      try {
        await fetch(session.mobileAuth.url, { redirect: "follow", credentials: "omit" });
      } catch {
        // Not on a mobile network, or the operator is unreachable: the session says what happened.
      }
      session = await api.session();
    }
    return session;
  }

  // Asks the start step for a number until the server accepts one; returns the session after sending.
  async #send(api, path, startStep, phoneNumberNeeded, forceNumber = false) {
    let validationError;
    for (;;) {
      const collected = await startStep(phoneNumberNeeded || forceNumber, validationError);
      const body = collected && collected.phoneNumber ? { phoneNumber: collected.phoneNumber } : {};
      try {
        return await api.call(path, body);
      } catch (error) {
        if (error.status === 400 && /phoneNumber/.test(error.message)) {
          validationError = { message: error.message };
          continue;
        }
        throw error;
      }
    }
  }

  async #otp(api, session) {
    const { otpStart, otpFinish } = this.config;
    session = await this.#send(api, "/otp", otpStart, session.phoneNumberNeeded);
    let otpError;
    while (session.status === "pending") {
      const answer = await otpFinish(otpError);
      const resultType = answer?.resultType ?? OtpResultType.SUCCESS;
      try {
        if (resultType === OtpResultType.RESEND) {
          session = await api.call("/otp");
          otpError = undefined;
        } else if (resultType === OtpResultType.MOBILE_NUMBER_CHANGE) {
          session = await this.#send(api, "/otp", otpStart, true, true);
          otpError = undefined;
        } else {
          session = await api.call("/otp/verify", { otp: String(answer?.input?.otp ?? "") });
          otpError = session.lastError ? { message: describe(session.lastError), code: session.lastError } : undefined;
        }
      } catch (error) {
        // A limit or an expired code: tell the finish step, and stop if nothing more can be done.
        otpError = { message: error.message, code: error.code };
        session = await api.session();
        if (session.status !== "pending" || !canContinueOtp(session)) break;
      }
    }
    return session;
  }

  async #instantLink(api, session) {
    const { instantLinkStart, instantLinkRetry } = this.config;
    session = await this.#send(api, "/instant-link", instantLinkStart, session.phoneNumberNeeded);
    const selected = waitForSelection(session.instantLink?.websocketUrl, api);
    try {
      while (session.status === "pending") {
        const retry = instantLinkRetry ? instantLinkRetry().then((choice) => ({ choice })) : new Promise(() => {});
        const outcome = await Promise.race([selected.promise.then((status) => ({ status })), retry]);
        if ("status" in outcome) break;
        if (outcome.choice === InstantLinkResultType.MOBILE_NUMBER_CHANGE) {
          session = await this.#send(api, "/instant-link", instantLinkStart, true, true);
        } else {
          session = await api.call("/instant-link");
        }
      }
    } finally {
      selected.close();
    }
    return api.session();
  }
}

// The session as start left it, from a staged flow's authToken (`methods`, `phoneNumberNeeded`);
// null for unified flows and for tokens without those claims.
function sessionAtStart(claims) {
  if (claims.flow !== "staged" || !Array.isArray(claims.methods)) return null;
  return {
    status: "pending",
    flowType: claims.flowType,
    methods: claims.methods,
    phoneNumberNeeded: claims.phoneNumberNeeded === true,
  };
}

function describe(error) {
  return (
    {
      "otp-invalid": "The code is not correct",
      "otp-expired": "The code has expired",
    }[error] || error
  );
}

function canContinueOtp(session) {
  const otp = session.otp || {};
  return otp.entriesLeft > 0 || otp.sendsLeft > 0;
}

// Waits (at most 3 minutes) for the server to say the link was selected: pushed over the
// WebSocket, or, when no socket can be held open, by asking the session every few seconds.
function waitForSelection(url, api) {
  let socket;
  let timer;
  let poller;
  const promise = new Promise((resolve) => {
    const check = async () => {
      try {
        const session = await api.session();
        if (session.status !== "pending") resolve(session.status);
      } catch (error) {
        // The server refused the flow's token (expired or revoked): no later check can pass, and
        // asking every few seconds until the 3 minutes end would only be refused again. A network
        // error, a throttled check or a server error passes: the next check will tell.
        if (error.status >= 400 && error.status < 500 && error.status !== 429) resolve("refused");
      }
    };
    const poll = () => {
      if (!poller) poller = setInterval(check, POLL_MS);
    };
    timer = setTimeout(() => resolve("timeout"), INSTANT_LINK_WAIT_MS);
    if (!url || typeof WebSocket === "undefined") {
      poll();
      return;
    }
    const separator = url.includes("?") ? "&" : "?";
    socket = new WebSocket(`${url}${separator}authToken=${encodeURIComponent(api.authToken)}`);
    socket.onopen = check; // the link may have been opened before the socket was
    socket.onmessage = (event) => {
      try {
        const message = JSON.parse(event.data);
        if (message.type === "possession" && message.status !== "pending") resolve(message.status);
      } catch {
        // not a message of ours
      }
    };
    socket.onerror = poll;
    socket.onclose = poll;
  });
  return {
    promise,
    close() {
      clearTimeout(timer);
      clearInterval(poller);
      if (socket && socket.readyState <= 1) socket.close();
    },
  };
}

// Keys live in IndexedDB, private halves non-extractable: script can sign with them, never read them.
const KEY_DB = "phoneid-device-keys";

function openKeyStore() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(KEY_DB, 1);
    request.onupgradeneeded = () => request.result.createObjectStore("keys", { keyPath: "deviceId" });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function keyStore(mode, action) {
  const db = await openKeyStore();
  try {
    return await new Promise((resolve, reject) => {
      const request = action(db.transaction("keys", mode).objectStore("keys"));
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  } finally {
    db.close();
  }
}

function base64url(bytes) {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

class DeviceKeys {
  constructor(api, publicApiKey) {
    this.api = api;
    this.publicApiKey = publicApiKey;
    this.clientId = api.claims.cid;
  }

  async #stored(requested) {
    const all = (await keyStore("readonly", (store) => store.getAll())).filter((k) => k.clientId === this.clientId);
    if (requested) return all.find((k) => k.deviceId === requested) || null;
    return all.sort((a, b) => b.createdAt - a.createdAt)[0] || null;
  }

  async #sign(privateKey, nonce) {
    const signature = await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      privateKey,
      new TextEncoder().encode(nonce),
    );
    return base64url(signature); // WebCrypto's ECDSA signature is already raw r||s
  }

  // Proves a stored key; returns the session. A revoked key is forgotten and surfaces as 8019.
  async prove(session) {
    const stored = await this.#stored(session.deviceKey.deviceId);
    if (!stored) return session;
    const signature = await this.#sign(stored.privateKey, session.deviceKey.nonce);
    try {
      return await this.api.call("/device-key", {
        deviceId: stored.deviceId,
        signature,
        publicApiKey: this.publicApiKey,
      });
    } catch (error) {
      if (error.code === 8019 || error.status === 403) {
        await keyStore("readwrite", (store) => store.delete(stored.deviceId));
      }
      if (error.code === 8019) throw error;
      return this.api.session(); // unknown or inactive key: run the full possession instead
    }
  }

  async register(session) {
    const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
    const { kty, crv, x, y } = await crypto.subtle.exportKey("jwk", pair.publicKey);
    const signature = await this.#sign(pair.privateKey, session.deviceKey.nonce);
    const { deviceId } = await this.api.call("/device-key/register", {
      publicKey: { kty, crv, x, y },
      signature,
      publicApiKey: this.publicApiKey,
    });
    await keyStore("readwrite", (store) =>
      store.put({ deviceId, clientId: this.clientId, privateKey: pair.privateKey, createdAt: Date.now() }),
    );
    return deviceId;
  }
}

export class AuthenticatorBuilder {
  constructor() {
    this.config = {}; // no role: the device decides a unified flow's type (isMobileWeb)
  }

  withAuthFinishStep(step) {
    this.config.authFinishStep = step;
    return this;
  }

  withMobileAuthImplementation(implementation) {
    if (implementation !== "fetch") throw new PhoneIdError(`unsupported Mobile Auth implementation: ${implementation}`);
    this.config.mobileAuthImplementation = implementation;
    return this;
  }

  withOtpFallback(start, finish) {
    this.config.otpStart = start;
    this.config.otpFinish = finish;
    return this;
  }

  withInstantLinkFallback(start, retry) {
    this.config.instantLinkStart = start;
    this.config.instantLinkRetry = retry;
    return this;
  }

  withRole(role) {
    if (role !== "primary" && role !== "secondary") throw new PhoneIdError(`unknown role: ${role}`);
    this.config.role = role;
    return this;
  }

  withDeviceContext(options) {
    this.config.deviceContext = options;
    return this;
  }

  build() {
    if (this.config.otpStart && !this.config.otpFinish) throw new PhoneIdError("withOtpFallback needs a finish step");
    if (this.config.instantLinkStart && isMobileWeb() && !this.config.otpStart) {
      throw new PhoneIdError("Instant Link is not supported on mobile web");
    }
    return new Authenticator({ ...this.config });
  }
}
