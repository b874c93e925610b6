import { afterEach, describe, expect, it, vi } from "vitest";

// The client's auth middleware over a fake localStorage and a fetch the test answers by hand
// (node has no page, so requests name an origin).
const BASE = "http://lagscope.test";
async function setUp() {
  const stored = new Map<string, string>();
  vi.stubGlobal("window", {
    localStorage: {
      getItem: (key: string) => stored.get(key) ?? null,
      setItem: (key: string, value: string) => void stored.set(key, value),
      removeItem: (key: string) => void stored.delete(key),
    },
  });
  const answers: ((response: Response) => void)[] = [];
  const sent: Request[] = [];
  const fetch = vi.fn(
    (request: Request) =>
      new Promise<Response>((resolve) => {
        sent.push(request);
        answers.push(resolve);
      }),
  );
  vi.stubGlobal("fetch", fetch);
  vi.resetModules();
  const client = await import("./client");
  const auth = await import("./auth");
  const unauthorized = () =>
    new Response(JSON.stringify({ title: "Unauthorized" }), {
      status: 401,
      headers: { "Content-Type": "application/problem+json" },
    });
  return { ...client, ...auth, fetch, sent, answers, unauthorized };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the auth middleware", () => {
  it("forgets the token a 401 answers", async () => {
    const { api, storeToken, readToken, fetch, sent, answers, unauthorized } = await setUp();
    storeToken("lgs_old");
    const pending = api.GET("/api/v1/auth/me", { baseUrl: BASE });
    await vi.waitFor(() => expect(fetch).toHaveBeenCalled());
    expect(sent[0]?.headers.get("Authorization")).toBe("Bearer lgs_old");
    answers[0]?.(unauthorized());
    await pending;
    expect(readToken()).toBeNull();
  });

  it("keeps a token stored while a request sent without it was answered 401", async () => {
    // The login page asks "who am I?" as it opens; single sign-on's token may be stored before
    // that answer (401, no token) comes back.
    const { api, storeToken, readToken, fetch, answers, unauthorized } = await setUp();
    const pending = api.GET("/api/v1/auth/me", { baseUrl: BASE });
    await vi.waitFor(() => expect(fetch).toHaveBeenCalled());
    storeToken("lgs_new");
    answers[0]?.(unauthorized());
    await pending;
    expect(readToken()).toBe("lgs_new");
  });
});
