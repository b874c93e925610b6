import createClient from "openapi-fetch";
import { describe, expect, it } from "vitest";
import { ApiProblem } from "../api/client";
import type { paths } from "../api/schema";
import { asReadiness, fetchReadiness } from "./useReadiness";

const body = {
  state: "down",
  checked_at: "2026-11-27T10:40:07.006Z",
  components: [
    { name: "store", state: "ok", message: "The store answers.", age_s: null, count: null },
    { name: "polling", state: "down", message: "No worker has polled for 42 s.", age_s: 42.1, count: null },
  ],
};

function clientAnswering(answer: (request: Request) => Promise<Response>) {
  return createClient<paths>({ baseUrl: "http://lagscope.test", fetch: answer });
}

function json(status: number, payload: unknown): Promise<Response> {
  return Promise.resolve(
    new Response(JSON.stringify(payload), { status, headers: { "Content-Type": "application/json" } }),
  );
}

async function failure(promise: Promise<unknown>): Promise<ApiProblem> {
  const error = await promise.then(
    () => null,
    (exc: unknown) => exc,
  );
  expect(error).toBeInstanceOf(ApiProblem);
  return error as ApiProblem;
}

describe("fetchReadiness", () => {
  const signal = () => new AbortController().signal;

  it("takes a 200 as the readiness", async () => {
    const ok = { ...body, state: "ok", components: [body.components[0]] };
    await expect(fetchReadiness(signal(), clientAnswering(() => json(200, ok)))).resolves.toEqual(ok);
  });

  it("takes a 503 with a readiness body as the readiness, not as a failure", async () => {
    await expect(fetchReadiness(signal(), clientAnswering(() => json(503, body)))).resolves.toEqual(body);
  });

  it("fails on a 503 or 502 without a readiness body", async () => {
    const proxy = await failure(fetchReadiness(signal(), clientAnswering(() => json(503, { title: "Service Unavailable" }))));
    expect(proxy.status).toBe(503);
    const gateway = await failure(
      fetchReadiness(signal(), clientAnswering(() => Promise.resolve(new Response("Bad Gateway", { status: 502 })))),
    );
    expect(gateway.status).toBe(502);
  });

  it("fails when the network does", async () => {
    const problem = await failure(
      fetchReadiness(signal(), clientAnswering(() => Promise.reject(new TypeError("Failed to fetch")))),
    );
    expect(problem).toMatchObject({ status: 0, title: "The API did not answer", detail: "Failed to fetch" });
  });

  it("gives up on an answer that does not come", async () => {
    const hang = (request: Request) =>
      new Promise<Response>((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason)));
    const problem = await failure(fetchReadiness(signal(), clientAnswering(hang), 20));
    expect(problem).toMatchObject({ status: 0, detail: "no answer within 0.02 s" });
  });

  it("lets a cancelled request stay a cancellation", async () => {
    const controller = new AbortController();
    const hang = (request: Request) =>
      new Promise<Response>((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason)));
    const pending = fetchReadiness(controller.signal, clientAnswering(hang), 10_000);
    controller.abort();
    const error = await pending.then(
      () => null,
      (exc: unknown) => exc,
    );
    expect(error).not.toBeInstanceOf(ApiProblem);
  });
});

describe("asReadiness", () => {
  it("accepts a readiness body and nothing else", () => {
    expect(asReadiness(body)).toBe(body);
    expect(asReadiness(null)).toBeNull();
    expect(asReadiness("down")).toBeNull();
    expect(asReadiness({ ...body, state: "broken" })).toBeNull();
    expect(asReadiness({ ...body, components: [{ name: "store", state: "ok" }] })).toBeNull();
  });
});
