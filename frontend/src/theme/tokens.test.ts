// The theme's colour pairs, read from styles.css itself: each pair a page draws (text on its
// background, a chart's marks on a panel) must read in the light theme and in the dark one.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { contrastRatio, parseColor, type Rgba } from "./contrast";

const CSS = readFileSync(new URL("../styles.css", import.meta.url), "utf8");

function block(selector: string): Map<string, string> {
  const start = CSS.indexOf(`${selector} {`);
  if (start < 0) throw new Error(`styles.css has no ${selector} block`);
  const body = CSS.slice(start, CSS.indexOf("\n}", start));
  return new Map([...body.matchAll(/(--[\w-]+):\s*([^;]+);/g)].map((m) => [m[1] ?? "", (m[2] ?? "").trim()]));
}

const LIGHT = block(":root");
const THEMES = { light: LIGHT, dark: new Map([...LIGHT, ...block(':root[data-theme="dark"]')]) };

function token(theme: Map<string, string>, name: string): Rgba {
  let value = theme.get(name);
  for (let hops = 0; value?.startsWith("var(") && hops < 5; hops++) value = theme.get(value.slice(4, -1).trim());
  const color = value === undefined ? null : parseColor(value);
  if (!color) throw new Error(`${name} is not a colour: ${value}`);
  return color;
}

// [text, background]: 4.5:1.
const TEXT: [string, string][] = [
  ["--ink", "--bg"],
  ["--ink", "--panel"],
  ["--muted", "--bg"],
  ["--muted", "--panel"],
  ["--muted", "--muted-bg"],
  ["--muted", "--track"],
  ["--muted", "--inset-bg"],
  ["--muted", "--ongoing-bg"],
  ["--accent", "--bg"],
  ["--accent", "--panel"],
  ["--accent", "--note-bg"],
  ["--on-accent", "--accent"],
  ["--panel", "--ink"],
  ["--ok", "--panel"],
  ["--ok", "--ok-bg"],
  ["--warn", "--panel"],
  ["--warn", "--warn-bg"],
  ["--bad", "--panel"],
  ["--bad", "--bad-bg"],
  ["--ink", "--bad-bg"],
  ["--ink", "--warn-bg"],
  ["--ink", "--code-bg"],
  ["--ink", "--inset-bg"],
  ["--ink", "--thead-bg"],
  ["--ink", "--note-bg"],
  ["--ink", "--form-bg"],
  ["--ink", "--param-shade-0"],
  ["--ink", "--param-shade-1"],
  ["--ink", "--input-bg"],
  ["--region-ink", "--region-bg"],
  ["--topbar-ink", "--topbar-bg"],
  ["--topbar-link", "--topbar-bg"],
  ["--topbar-muted", "--topbar-bg"],
  ["--topbar-badge-ink", "--topbar-badge-bg"],
  ["--topbar-ink", "--topbar-input-bg"],
  ["--terminal-ink", "--terminal-bg"],
  ["--chart-axis", "--panel"],
];

// [mark, background]: 3:1 (lines, glyphs, the axis ticks' minimum as the e2e test measures).
const MARKS: [string, string][] = [
  ...Array.from({ length: 10 }, (_, i): [string, string] => [`--series-${i}`, "--panel"]),
  ["--param", "--panel"],
  ["--annotation", "--panel"],
  ["--chart-lag", "--panel"],
  ["--chart-not-received", "--panel"],
  ["--chart-not-applied", "--panel"],
  ["--heat-busy", "--heat-idle"],
];

describe.each(Object.entries(THEMES))("the %s theme", (_name, theme) => {
  it.each(TEXT)("%s reads on %s (4.5:1)", (fg, bg) => {
    expect(contrastRatio(token(theme, fg), token(theme, bg))).toBeGreaterThanOrEqual(4.5);
  });

  it.each(MARKS)("%s stands out on %s (3:1)", (fg, bg) => {
    expect(contrastRatio(token(theme, fg), token(theme, bg))).toBeGreaterThanOrEqual(3);
  });
});

it("the dark theme sets every colour the light one does", () => {
  const dark = block(':root[data-theme="dark"]');
  const colours = [...LIGHT.keys()].filter((k) => k !== "--radius");
  expect(colours.filter((k) => !dark.has(k))).toEqual([]);
});
