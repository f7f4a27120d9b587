/**
 * Names for the generated types (schema.ts, from docs/openapi.json): the body each call sends and
 * the answer it gets, taken from the operation itself so that a method cannot drift from its route.
 */
import type { components, paths } from "./schema.js";

type Method = "get" | "post" | "delete";
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

/** The JSON body of an operation. */
export type RequestBody<P extends keyof paths, M extends Method = "post"> =
  Operation<P, M> extends { requestBody?: { content: { "application/json": infer Body } } } ? Body : never;

/** The JSON answer of an operation's 200. */
export type ResponseBody<P extends keyof paths, M extends Method = "post"> =
  Operation<P, M> extends { responses: { 200: { content: { "application/json": infer Answer } } } }
    ? Answer
    : never;

/** The query parameters of an operation. */
export type Query<P extends keyof paths, M extends Method = "get"> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

type Schemas = components["schemas"];

export type TokenResponse = Schemas["TokenResponse"];
export type ErrorBody = Schemas["ErrorBody"];

export type StartRequest = RequestBody<"/v3/start">;
export type StartResponse = ResponseBody<"/v3/start">;
export type ValidateRequest = RequestBody<"/v3/validate">;
export type ValidateResponse = ResponseBody<"/v3/validate">;
export type ChallengeRequest = RequestBody<"/v3/challenge">;
export type ChallengeResponse = ResponseBody<"/v3/challenge">;
export type CompleteRequest = RequestBody<"/v3/complete">;
export type CompleteResponse = ResponseBody<"/v3/complete">;

export type UnifyRequest = RequestBody<"/v3/unify">;
export type UnifyResponse = ResponseBody<"/v3/unify">;
export type UnifyStatusRequest = RequestBody<"/v3/unify-status">;
export type UnifyStatusResponse = ResponseBody<"/v3/unify-status">;
export type UnifyBindRequest = RequestBody<"/v3/unify-bind">;
export type UnifyBindResponse = ResponseBody<"/v3/unify-bind">;
export type RevokeDeviceRequest = RequestBody<"/v3/device/revoke">;
export type RevokeDeviceResponse = ResponseBody<"/v3/device/revoke">;

export type VerifyRequest = RequestBody<"/v3/verify">;
export type VerifyResponse = ResponseBody<"/v3/verify">;
export type VerifyBatchRequest = RequestBody<"/v3/verify/batch">;
export type VerifyBatchResponse = ResponseBody<"/v3/verify/batch">;

export type EnrollRequest = RequestBody<"/v3/identity">;
export type EnrollResponse = ResponseBody<"/v3/identity">;
export type EnrollBatchRequest = RequestBody<"/v3/identity/batch">;
export type EnrollBatchResponse = ResponseBody<"/v3/identity/batch">;
export type ListIdentitiesQuery = Query<"/v3/identity">;
export type IdentityList = ResponseBody<"/v3/identity", "get">;
export type Identity = ResponseBody<"/v3/identity/{id}", "get">;
export type IdentityLookup = ResponseBody<"/v3/identity/{id}/lookup", "get">;
export type IdentityStatusRequest = RequestBody<"/v3/identity/{id}/activate">;
export type SuccessResponse = ResponseBody<"/v3/identity/{id}", "delete">;

export type ListDecisionsQuery = Query<"/v3/decisions">;
export type DecisionList = ResponseBody<"/v3/decisions", "get">;
export type DecisionSummaryItem = Schemas["DecisionSummaryItem"];
export type Decision = ResponseBody<"/v3/decisions/{id}", "get">;
export type DecisionSummaryQuery = Query<"/v3/decisions/summary">;
export type DecisionSummary = ResponseBody<"/v3/decisions/summary", "get">;
export type DecisionErasure = ResponseBody<"/v3/decisions", "delete">;
