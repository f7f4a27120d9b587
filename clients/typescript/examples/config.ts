/**
 * The examples' settings, from the environment: PHONEID_BASE_URL, PHONEID_CLIENT_ID and
 * PHONEID_CLIENT_SECRET, or B, ID and SECRET as the banner of `phoneid dev` exports them.
 */
import { PhoneIdClient } from "@phoneid/server";

function setting(names: string[], fallback?: string): string {
  for (const name of names) {
    const value = process.env[name];
    if (value) return value;
  }
  if (fallback !== undefined) return fallback;
  throw new Error(`set ${names.join(" or ")} (the banner of \`phoneid dev\` prints them)`);
}

export const baseUrl = setting(["PHONEID_BASE_URL", "B"], "http://127.0.0.1:3000");

export function client(): PhoneIdClient {
  return new PhoneIdClient({
    baseUrl,
    clientId: setting(["PHONEID_CLIENT_ID", "ID"]),
    clientSecret: setting(["PHONEID_CLIENT_SECRET", "SECRET"]),
  });
}

/** Runs an example: what it did on stdout, and exit code 1 with the reason on failure. */
export function run(example: () => Promise<void>): void {
  example().catch((error: unknown) => {
    console.error(`FAILED: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    process.exitCode = 1;
  });
}

export function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(what);
}
