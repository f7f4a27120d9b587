/** A fetch that answers from a script and records each request, for the unit tests. */
export interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

export type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

export class FakeApi {
  readonly sent: Sent[] = [];
  tokensIssued = 0;
  private readonly answers: Answer[] = [];

  constructor(private readonly tokenLifeSeconds = 3600) {}

  /** The next answers of /v3 calls, in order; once used up, 200 {"success": true}. */
  answer(...answers: Answer[]): this {
    this.answers.push(...answers);
    return this;
  }

  calls(): Sent[] {
    return this.sent.filter((request) => !request.url.endsWith("/token"));
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const sent = { method: init?.method ?? "GET", url: String(input), headers, body: init?.body as string | undefined };
    this.sent.push(sent);
    if (sent.url.endsWith("/token")) {
      this.tokensIssued += 1;
      return json(200, {
        access_token: `token-${this.tokensIssued}`,
        token_type: "Bearer",
        expires_in: this.tokenLifeSeconds,
        refresh_token: "refresh",
        refresh_expires_in: 86400,
      });
    }
    const next = this.answers.shift() ?? { status: 200, body: { success: true } };
    return json(next.status, next.body, next.headers);
  };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return new Response(text, { status, headers: { "content-type": "application/json", ...headers } });
}
