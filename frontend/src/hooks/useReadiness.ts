import { useQuery } from "@tanstack/react-query";
import type { Client } from "openapi-fetch";
import { api, ApiProblem, toProblem } from "../api/client";
import type { paths } from "../api/schema";
import { keys } from "./keys";
import { livePolling } from "./polling";
import type { Readiness } from "../viewmodels/healthStrip";

// Every 5 s: the strip is a warning light, not a chart; the figures it warns about are older.
const READINESS_INTERVAL_MS = 5000;
// /readyz asks the store and the broker (1 s timeouts there, health/broker.py): an answer later
// than this is no answer, and the strip says so instead of waiting on a hung request.
const READINESS_TIMEOUT_MS = 8000;

const STATES: ReadonlySet<unknown> = new Set(["ok", "warn", "down"]);

/** A readiness body (the answer to /readyz, 200 or 503), or null for anything else. */
export function asReadiness(body: unknown): Readiness | null {
  if (typeof body !== "object" || body === null) return null;
  const { state, checked_at, components } = body as Record<string, unknown>;
  if (!STATES.has(state) || typeof checked_at !== "string" || !Array.isArray(components)) return null;
  const wellFormed = components.every(
    (c: unknown) =>
      typeof c === "object" &&
      c !== null &&
      typeof (c as Record<string, unknown>).name === "string" &&
      STATES.has((c as Record<string, unknown>).state) &&
      typeof (c as Record<string, unknown>).message === "string",
  );
  return wellFormed ? (body as Readiness) : null;
}

/** Lagscope's own readiness. A 503 carrying a readiness body is an answer (a part is down), not
 * a failure; no answer, a late one or any other error is a thrown ApiProblem. */
export async function fetchReadiness(
  signal: AbortSignal,
  client: Client<paths> = api,
  timeoutMs: number = READINESS_TIMEOUT_MS,
): Promise<Readiness> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal.addEventListener("abort", abort);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const { data, error, response } = await client.GET("/readyz", { signal: controller.signal });
    const readiness = asReadiness(data ?? (response.status === 503 ? error : undefined));
    if (readiness) return readiness;
    throw response.ok ? new ApiProblem(response.status, "Not a readiness answer", "") : toProblem(error, response);
  } catch (exc) {
    if (exc instanceof ApiProblem) throw exc;
    // Cancelled by TanStack Query (unmounted, superseded): let it see its own abort.
    if (signal.aborted) throw exc;
    const detail = timedOut ? `no answer within ${timeoutMs / 1000} s` : exc instanceof Error ? exc.message : "";
    throw new ApiProblem(0, "The API did not answer", detail);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", abort);
  }
}

/** Lagscope's own health (/readyz, no sign-in needed), live like the pages (see polling.ts):
 * every 5 s while the tab is shown. Failing is itself news (the API does not answer), so one
 * retry only, a second later: a single dropped connection does not raise the strip. */
export function useReadiness() {
  return useQuery({
    queryKey: keys.readiness(),
    queryFn: ({ signal }) => fetchReadiness(signal),
    retry: 1,
    retryDelay: 1000,
    ...livePolling(READINESS_INTERVAL_MS),
  });
}
