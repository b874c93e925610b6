import { describe, expect, it } from "vitest";
import { pageFor } from "./pageFor";

describe("pageFor", () => {
  it.each([
    ["/", "overview"],
    ["/login", "login"],
    ["/clusters/3", "cluster"],
    ["/clusters/3/", "cluster"],
    ["/clusters/3/journal", "journal"],
    ["/clusters/3/episodes", "episodes"],
    ["/clusters/3/episodes/17", "episode"],
    ["/clusters/3/compare", "compare"],
    ["/clusters/3/workers", "workers"],
    ["/alerts", "alerts"],
    ["/inbox", "inbox"],
    ["/settings", "settings"],
    ["/settings/servers", "settings"],
    ["/clusters/3/journal/9", "notFound"],
    ["/nothing", "notFound"],
  ])("%s opens %s", (path, page) => {
    expect(pageFor(path)).toBe(page);
  });
});
