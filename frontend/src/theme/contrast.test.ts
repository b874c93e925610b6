import { describe, expect, it } from "vitest";
import { contrastRatio, over, parseColor, relativeLuminance } from "./contrast";

const color = (text: string) => {
  const parsed = parseColor(text);
  if (!parsed) throw new Error(`unparsed ${text}`);
  return parsed;
};

describe("parseColor", () => {
  it("reads hex, rgb() and rgba() as browsers compute them", () => {
    expect(parseColor("#fff")).toEqual({ r: 255, g: 255, b: 255, a: 1 });
    expect(parseColor("#1C2330")).toEqual({ r: 28, g: 35, b: 48, a: 1 });
    expect(parseColor("rgb(28, 35, 48)")).toEqual({ r: 28, g: 35, b: 48, a: 1 });
    expect(parseColor("rgba(0, 0, 0, 0)")).toEqual({ r: 0, g: 0, b: 0, a: 0 });
    expect(parseColor("rgb(10 20 30 / 50%)")).toEqual({ r: 10, g: 20, b: 30, a: 0.5 });
  });

  it("refuses what it cannot read rather than guessing", () => {
    expect(parseColor("var(--ink)")).toBeNull();
    expect(parseColor("#12345")).toBeNull();
    expect(parseColor("red")).toBeNull();
  });
});

describe("contrastRatio", () => {
  it("matches WCAG's reference values", () => {
    expect(relativeLuminance(color("#fff"))).toBeCloseTo(1, 5);
    expect(relativeLuminance(color("#000"))).toBe(0);
    expect(contrastRatio(color("#000"), color("#fff"))).toBeCloseTo(21, 5);
    expect(contrastRatio(color("#fff"), color("#fff"))).toBeCloseTo(1, 5);
    // #767676 is the lightest grey that passes 4.5:1 on white; #777 just fails.
    expect(contrastRatio(color("#767676"), color("#fff"))).toBeGreaterThanOrEqual(4.5);
    expect(contrastRatio(color("#777"), color("#fff"))).toBeLessThan(4.5);
  });

  it("is symmetric", () => {
    const a = color("#2f6fde");
    const b = color("#f6f7f9");
    expect(contrastRatio(a, b)).toBeCloseTo(contrastRatio(b, a), 10);
  });

  it("paints a translucent foreground over the background first", () => {
    const half = color("rgba(0, 0, 0, 0.5)");
    expect(over(half, color("#fff"))).toEqual({ r: 127.5, g: 127.5, b: 127.5, a: 1 });
    expect(contrastRatio(half, color("#fff"))).toBeLessThan(contrastRatio(color("#000"), color("#fff")));
    expect(contrastRatio(color("rgba(0, 0, 0, 0)"), color("#fff"))).toBeCloseTo(1, 5);
  });
});
