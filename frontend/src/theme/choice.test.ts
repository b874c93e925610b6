import { describe, expect, it } from "vitest";
import { parseThemeChoice, resolveTheme, themeChoiceLabel } from "./choice";

describe("theme choice", () => {
  it("reads a stored choice and follows the system for anything else", () => {
    expect(parseThemeChoice("dark")).toBe("dark");
    expect(parseThemeChoice("light")).toBe("light");
    expect(parseThemeChoice("system")).toBe("system");
    expect(parseThemeChoice(null)).toBe("system");
    expect(parseThemeChoice("")).toBe("system");
    expect(parseThemeChoice("Dark")).toBe("system");
    expect(parseThemeChoice("solarized")).toBe("system");
  });

  it("resolves system from the browser's preference, and a chosen theme regardless of it", () => {
    expect(resolveTheme("system", true)).toBe("dark");
    expect(resolveTheme("system", false)).toBe("light");
    expect(resolveTheme("light", true)).toBe("light");
    expect(resolveTheme("dark", false)).toBe("dark");
  });

  it("says what system gives now", () => {
    expect(themeChoiceLabel("system", true)).toBe("system (dark)");
    expect(themeChoiceLabel("system", false)).toBe("system (light)");
    expect(themeChoiceLabel("dark", false)).toBe("dark");
  });
});
