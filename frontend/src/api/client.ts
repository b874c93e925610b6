// The typed API client. Types come from schema.d.ts, generated from the API's OpenAPI document
// (`make client`), and so is enums.ts; nothing in this folder except this file, auth.ts and
// metrics.ts is written by hand.
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema";
import { clearToken, readToken } from "./auth";

export type Schemas = components["schemas"];

/** An RFC 9457 problem from the API (or a network failure dressed as one). */
export class ApiProblem extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  /** Seconds, from Retry-After on a 429. */
  readonly retryAfterS: number | null;

  constructor(status: number, title: string, detail: string, retryAfterS: number | null = null) {
    super(detail ? `${title}: ${detail}` : title);
    this.name = "ApiProblem";
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.retryAfterS = retryAfterS;
  }
}

/** Listeners told when the API answers 401 to a signed-in request (token expired or revoked). */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = readToken();
    if (token) request.headers.set("Authorization", `Bearer ${token}`);
    return request;
  },
  onResponse({ request, response }) {
    // Only a 401 to the token kept now says it is bad: an answer to a request sent before a
    // sign-in stored one (the login page's own "who am I?") must not throw the new one away.
    const token = readToken();
    if (response.status === 401 && token && request.headers.get("Authorization") === `Bearer ${token}`) {
      clearToken();
      unauthorizedListeners.forEach((listener) => listener());
    }
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: "" });
api.use(auth);

interface ProblemBody {
  title?: unknown;
  detail?: unknown;
  errors?: unknown;
}

function describeErrors(errors: unknown): string {
  if (!Array.isArray(errors)) return "";
  return errors
    .map((e: { loc?: unknown[]; msg?: unknown }) =>
      [Array.isArray(e.loc) ? e.loc.slice(1).join(".") : "", typeof e.msg === "string" ? e.msg : ""]
        .filter(Boolean)
        .join(": "),
    )
    .filter(Boolean)
    .join("; ");
}

/** The problem an error answer carries, whatever its shape. */
export function toProblem(error: unknown, response: Response | undefined): ApiProblem {
  const status = response?.status ?? 0;
  const body = (typeof error === "object" && error !== null ? error : {}) as ProblemBody;
  const title =
    typeof body.title === "string" ? body.title : response?.statusText || `HTTP ${status}`;
  let detail = typeof body.detail === "string" ? body.detail : "";
  const fields = describeErrors(body.errors);
  if (fields) detail = detail ? `${detail} (${fields})` : fields;
  const retry = response?.headers.get("Retry-After");
  const retryAfterS = retry && /^\d+$/.test(retry) ? Number(retry) : null;
  return new ApiProblem(status, title, detail, retryAfterS);
}

/** openapi-fetch's `{data, error, response}` → the data, or a thrown ApiProblem. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (exc) {
    if (exc instanceof DOMException && exc.name === "AbortError") throw exc;
    throw new ApiProblem(0, "The API did not answer", exc instanceof Error ? exc.message : "");
  }
  if (result.error !== undefined || !result.response.ok) {
    throw toProblem(result.error, result.response);
  }
  return result.data as T;
}
