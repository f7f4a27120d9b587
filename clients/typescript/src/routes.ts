/**
 * The route of each method of PhoneIdClient: typed by the generated `paths`, so a route the API
 * no longer serves fails the build. A test holds it to docs/openapi.json: every server operation
 * has its method.
 */
import type { paths } from "./schema.js";

export interface Route {
  method: "GET" | "POST" | "DELETE";
  path: keyof paths;
}

export const ROUTES = {
  start: { method: "POST", path: "/v3/start" },
  validate: { method: "POST", path: "/v3/validate" },
  challenge: { method: "POST", path: "/v3/challenge" },
  complete: { method: "POST", path: "/v3/complete" },
  unify: { method: "POST", path: "/v3/unify" },
  unifyStatus: { method: "POST", path: "/v3/unify-status" },
  unifyBind: { method: "POST", path: "/v3/unify-bind" },
  revokeDevice: { method: "POST", path: "/v3/device/revoke" },
  verify: { method: "POST", path: "/v3/verify" },
  verifyBatch: { method: "POST", path: "/v3/verify/batch" },
  listIdentities: { method: "GET", path: "/v3/identity" },
  enrollIdentity: { method: "POST", path: "/v3/identity" },
  enrollIdentities: { method: "POST", path: "/v3/identity/batch" },
  getIdentity: { method: "GET", path: "/v3/identity/{id}" },
  disenrollIdentity: { method: "DELETE", path: "/v3/identity/{id}" },
  activateIdentity: { method: "POST", path: "/v3/identity/{id}/activate" },
  deactivateIdentity: { method: "POST", path: "/v3/identity/{id}/deactivate" },
  lookupIdentities: { method: "GET", path: "/v3/identity/{id}/lookup" },
  listDecisions: { method: "GET", path: "/v3/decisions" },
  getDecision: { method: "GET", path: "/v3/decisions/{id}" },
  summariseDecisions: { method: "GET", path: "/v3/decisions/summary" },
  eraseDecisions: { method: "DELETE", path: "/v3/decisions" },
} as const satisfies Record<string, Route>;

/** The token is the one call outside ROUTES: the client makes it itself (TokenSource). */
export const TOKEN_ROUTE = { method: "POST", path: "/token" } as const satisfies Route;
