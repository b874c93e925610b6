// The header's theme switch: follow the system, or always light, or always dark.
import { parseThemeChoice, THEME_CHOICES, themeChoiceLabel } from "../theme/choice";
import { chooseTheme, useTheme } from "../theme/themeStore";

export function ThemeToggle() {
  const { choice, systemDark } = useTheme();
  return (
    <label className="inline theme-toggle">
      Theme
      <select value={choice} onChange={(event) => chooseTheme(parseThemeChoice(event.target.value))} data-testid="theme-toggle">
        {THEME_CHOICES.map((c) => (
          <option key={c} value={c}>
            {themeChoiceLabel(c, systemDark)}
          </option>
        ))}
      </select>
    </label>
  );
}
