/**
 * PhoneIdClient: one typed method per call of PhoneID's server API (docs/api.md). The types come
 * from docs/openapi.json (schema.ts, generated); this file only adds what a generator cannot: the
 * access token's lifecycle, the Idempotency-Key, and the API's error codes as exceptions.
 */
import { errorOf } from "./errors.js";
import { ROUTES, type Route } from "./routes.js";
import { type Clock, TokenSource } from "./token.js";
import type * as T from "./types.js";

export const VERSION = "0.1.0";

export interface ClientOptions {
  /** The stack's base URL: `http://127.0.0.1:3000` for `make dev`, a deployed stack's ApiUrl otherwise. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** The fetch to call the API with (default: the global fetch of Node 18+). */
  fetch?: typeof fetch;
  /** Milliseconds since the epoch (default: Date.now), for the token's renewal. */
  clock?: Clock;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

/** The six write calls take an Idempotency-Key: a retry under the same key gets the first answer and does nothing twice (docs/api.md, "Retries with an Idempotency-Key"). */
export interface WriteOptions extends RequestOptions {
  idempotencyKey?: string;
}

/** `clientRequestId` of a GET or DELETE, sent in the query string. */
export interface ReadOptions extends RequestOptions {
  clientRequestId?: string;
}

type QueryValue = string | number | boolean | null | undefined;

interface Call {
  route: Route;
  id?: string;
  body?: unknown;
  query?: Record<string, QueryValue>;
  options?: WriteOptions;
}

export class PhoneIdClient {
  private readonly baseUrl: string;
  private readonly fetcher: typeof fetch;
  private readonly tokens: TokenSource;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.tokens = new TokenSource(
      this.baseUrl,
      options.clientId,
      options.clientSecret,
      this.fetcher,
      options.clock ?? Date.now,
    );
  }

  /** The current access token (fetched, or renewed, when due): for calls this SDK does not make. */
  accessToken(): Promise<string> {
    return this.tokens.token();
  }

  // The staged flow (docs/api.md, "The staged flow")

  start(body: T.StartRequest, options?: WriteOptions): Promise<T.StartResponse> {
    return this.call({ route: ROUTES.start, body, options });
  }

  validate(body: T.ValidateRequest, options?: RequestOptions): Promise<T.ValidateResponse> {
    return this.call({ route: ROUTES.validate, body, options });
  }

  challenge(body: T.ChallengeRequest, options?: RequestOptions): Promise<T.ChallengeResponse> {
    return this.call({ route: ROUTES.challenge, body, options });
  }

  complete(body: T.CompleteRequest, options?: RequestOptions): Promise<T.CompleteResponse> {
    return this.call({ route: ROUTES.complete, body, options });
  }

  // Unified authentication (docs/unify.md)

  unify(body: T.UnifyRequest, options?: RequestOptions): Promise<T.UnifyResponse> {
    return this.call({ route: ROUTES.unify, body, options });
  }

  unifyStatus(body: T.UnifyStatusRequest, options?: RequestOptions): Promise<T.UnifyStatusResponse> {
    return this.call({ route: ROUTES.unifyStatus, body, options });
  }

  unifyBind(body: T.UnifyBindRequest, options?: RequestOptions): Promise<T.UnifyBindResponse> {
    return this.call({ route: ROUTES.unifyBind, body, options });
  }

  revokeDevice(body: T.RevokeDeviceRequest, options?: WriteOptions): Promise<T.RevokeDeviceResponse> {
    return this.call({ route: ROUTES.revokeDevice, body, options });
  }

  // Verify (docs/verify.md)

  verify(body: T.VerifyRequest, options?: WriteOptions): Promise<T.VerifyResponse> {
    return this.call({ route: ROUTES.verify, body, options });
  }

  verifyBatch(body: T.VerifyBatchRequest, options?: WriteOptions): Promise<T.VerifyBatchResponse> {
    return this.call({ route: ROUTES.verifyBatch, body, options });
  }

  // Identity Manager (docs/identity-manager.md)

  listIdentities(query: T.ListIdentitiesQuery = {}, options?: RequestOptions): Promise<T.IdentityList> {
    return this.call({ route: ROUTES.listIdentities, query, options });
  }

  enrollIdentity(body: T.EnrollRequest, options?: WriteOptions): Promise<T.EnrollResponse> {
    return this.call({ route: ROUTES.enrollIdentity, body, options });
  }

  enrollIdentities(body: T.EnrollBatchRequest, options?: WriteOptions): Promise<T.EnrollBatchResponse> {
    return this.call({ route: ROUTES.enrollIdentities, body, options });
  }

  getIdentity(serviceId: string, options: ReadOptions = {}): Promise<T.Identity> {
    const query = { clientRequestId: options.clientRequestId };
    return this.call({ route: ROUTES.getIdentity, id: serviceId, query, options });
  }

  disenrollIdentity(serviceId: string, options: ReadOptions = {}): Promise<T.SuccessResponse> {
    const query = { clientRequestId: options.clientRequestId };
    return this.call({ route: ROUTES.disenrollIdentity, id: serviceId, query, options });
  }

  activateIdentity(
    serviceId: string,
    body: T.IdentityStatusRequest = {},
    options?: RequestOptions,
  ): Promise<T.SuccessResponse> {
    return this.call({ route: ROUTES.activateIdentity, id: serviceId, body, options });
  }

  deactivateIdentity(
    serviceId: string,
    body: T.IdentityStatusRequest = {},
    options?: RequestOptions,
  ): Promise<T.SuccessResponse> {
    return this.call({ route: ROUTES.deactivateIdentity, id: serviceId, body, options });
  }

  /** The identities of a phone number (E.164): `GET /v3/identity/{number}/lookup`. */
  lookupIdentities(phoneNumber: string, options: ReadOptions = {}): Promise<T.IdentityLookup> {
    const query = { clientRequestId: options.clientRequestId };
    return this.call({ route: ROUTES.lookupIdentities, id: phoneNumber, query, options });
  }

  // Decision records (docs/decision-records.md)

  /**
   * Every decision the filters keep, newest first, across all the pages of `GET /v3/decisions`: a page
   * (`limit` records, 1..100) is asked for when the iteration reaches it, until one has no `lastKey`;
   * a page may be short or empty before the last. `startKey` resumes after a page read earlier.
   */
  async *listDecisions(
    query: T.ListDecisionsQuery = {},
    options?: RequestOptions,
  ): AsyncGenerator<T.DecisionSummaryItem, void, undefined> {
    let startKey = query.startKey;
    do {
      const page: T.DecisionList = await this.call({
        route: ROUTES.listDecisions,
        query: { ...query, startKey },
        options,
      });
      yield* page.results ?? [];
      startKey = page.lastKey;
    } while (startKey !== undefined && startKey !== null);
  }

  /** One decision whole, by its id (a batch item's or a Connect row's has a `#`: it is escaped here). */
  getDecision(id: string, options: ReadOptions = {}): Promise<T.Decision> {
    const query = { clientRequestId: options.clientRequestId };
    return this.call({ route: ROUTES.getDecision, id, query, options });
  }

  /** The days `from` to `to` (YYYY-MM-DD, both inclusive, at most 366; default the last 30) counted. */
  summariseDecisions(query: T.DecisionSummaryQuery = {}, options?: RequestOptions): Promise<T.DecisionSummary> {
    return this.call({ route: ROUTES.summariseDecisions, query, options });
  }

  /** The client's decision records of a phone number (E.164) erased: `DELETE /v3/decisions?phoneNumber=`. */
  eraseDecisions(phoneNumber: string, options: ReadOptions = {}): Promise<T.DecisionErasure> {
    const query = { phoneNumber, clientRequestId: options.clientRequestId };
    return this.call({ route: ROUTES.eraseDecisions, query, options });
  }

  private async call<Answer>(call: Call): Promise<Answer> {
    let response = await this.send(call, await this.tokens.token());
    if (response.status === 401) {
      // The token may have been revoked or its key replaced before its expiry: one new token.
      await response.body?.cancel();
      this.tokens.invalidate();
      response = await this.send(call, await this.tokens.token());
    }
    if (!response.ok) throw await errorOf(response);
    return (await response.json()) as Answer;
  }

  private send({ route, id, body, query, options }: Call, token: string): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: "application/json",
      "user-agent": `phoneid-server-typescript/${VERSION}`,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (options?.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey;
    const init: RequestInit = { method: route.method, headers };
    if (body !== undefined) init.body = JSON.stringify(body);
    if (options?.signal) init.signal = options.signal;
    return this.fetcher(this.url(route, id, query), init);
  }

  private url(route: Route, id: string | undefined, query: Record<string, QueryValue> | undefined): string {
    const path = id === undefined ? route.path : route.path.replace("{id}", encodeURIComponent(id));
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) search.set(name, String(value));
    }
    const rest = search.toString();
    return `${this.baseUrl}${path}${rest ? `?${rest}` : ""}`;
  }
}
