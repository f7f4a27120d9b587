/**
 * The access token of the client-credentials grant (docs/api.md, POST /token): fetched on first
 * use, kept, and fetched again before it expires, so that no call goes out with a token about to
 * lapse on its way.
 */
import { errorOf } from "./errors.js";
import type { TokenResponse } from "./types.js";

/** Milliseconds since the epoch, as Date.now(); tests pass their own. */
export type Clock = () => number;

/** A token is renewed once this little of its life is left: a minute, or a tenth of a longer life. */
const MIN_MARGIN_MS = 60_000;
const MARGIN_SHARE = 0.1;

interface Held {
  token: string;
  renewAt: number;
}

export class TokenSource {
  private held: Held | undefined;
  private pending: Promise<Held> | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
    private readonly fetcher: typeof fetch,
    private readonly clock: Clock,
  ) {}

  /** A token good for the next call: the one held unless it is due for renewal. */
  async token(): Promise<string> {
    if (this.held && this.clock() < this.held.renewAt) return this.held.token;
    // One request for all the calls that find the token due at once.
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = undefined;
    });
    this.held = await this.pending;
    return this.held.token;
  }

  /** Forget the token (the API refused it): the next call fetches a new one. */
  invalidate(): void {
    this.held = undefined;
  }

  private async fetchToken(): Promise<Held> {
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: this.clientId,
      client_secret: this.clientSecret,
    });
    const response = await this.fetcher(`${this.baseUrl}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: form.toString(),
    });
    if (!response.ok) throw await errorOf(response);
    const answer = (await response.json()) as TokenResponse;
    const lifeMs = answer.expires_in * 1000;
    const margin = Math.max(MIN_MARGIN_MS, lifeMs * MARGIN_SHARE);
    return { token: answer.access_token, renewAt: this.clock() + lifeMs - margin };
  }
}
