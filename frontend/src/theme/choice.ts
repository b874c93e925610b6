// Which theme the app shows: the user's choice (kept in localStorage) or, for "system", the
// browser's prefers-color-scheme. Pure, so the rules are tested without a browser.
export type Theme = "light" | "dark";
export type ThemeChoice = "system" | Theme;

export const THEME_CHOICES: readonly ThemeChoice[] = ["system", "light", "dark"];
export const THEME_KEY = "lagscope.theme";

/** A stored choice; anything else (nothing stored, an old or hand-edited value) follows the system. */
export function parseThemeChoice(stored: string | null | undefined): ThemeChoice {
  return THEME_CHOICES.find((c) => c === stored) ?? "system";
}

export function resolveTheme(choice: ThemeChoice, systemPrefersDark: boolean): Theme {
  if (choice === "system") return systemPrefersDark ? "dark" : "light";
  return choice;
}

/** What the toggle says for a choice; "system" names what the system gives now. */
export function themeChoiceLabel(choice: ThemeChoice, systemPrefersDark: boolean): string {
  if (choice !== "system") return choice;
  return `system (${resolveTheme("system", systemPrefersDark)})`;
}
