// The theme in force, applied as <html data-theme="light|dark">: styles.css swaps its custom
// properties on it and everything coloured (pages and charts alike) reads them, so a switch
// repaints at once without re-rendering a chart. The choice is kept per browser in
// localStorage; "system" follows prefers-color-scheme, also when it changes while the app is
// open (a desktop switching to dark at dusk), and another tab's choice is taken up too.
import { useSyncExternalStore } from "react";
import { parseThemeChoice, resolveTheme, THEME_KEY, type Theme, type ThemeChoice } from "./choice";

export interface ThemeState {
  choice: ThemeChoice;
  systemDark: boolean;
  theme: Theme;
}

const DARK_QUERY = "(prefers-color-scheme: dark)";
const listeners = new Set<() => void>();
let state: ThemeState = { choice: "system", systemDark: false, theme: "light" };

function systemDark(): boolean {
  return window.matchMedia(DARK_QUERY).matches;
}

function storedChoice(): ThemeChoice {
  try {
    return parseThemeChoice(window.localStorage.getItem(THEME_KEY));
  } catch {
    return "system"; // storage refused (a locked-down profile): the system's theme still works
  }
}

function update(choice: ThemeChoice): void {
  const dark = systemDark();
  const next: ThemeState = { choice, systemDark: dark, theme: resolveTheme(choice, dark) };
  if (next.choice === state.choice && next.systemDark === state.systemDark && next.theme === state.theme) return;
  state = next;
  document.documentElement.dataset.theme = next.theme;
  for (const listener of listeners) listener();
}

/** Once, before the first render, so the first paint is already in the right theme. */
export function startTheme(): void {
  update(storedChoice());
  document.documentElement.dataset.theme = state.theme; // also when the stored choice is the default
  window.matchMedia(DARK_QUERY).addEventListener("change", () => update(state.choice));
  window.addEventListener("storage", (event) => {
    if (event.key === THEME_KEY) update(parseThemeChoice(event.newValue));
  });
}

export function chooseTheme(choice: ThemeChoice): void {
  try {
    window.localStorage.setItem(THEME_KEY, choice);
  } catch {
    // Not kept across reloads, but shown now.
  }
  update(choice);
}

export function useTheme(): ThemeState {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => state,
  );
}
