import { describe, expect, it } from "vitest";
import { passwordChangeBody } from "./passwordForm";

describe("passwordChangeBody", () => {
  it("sends the new password with the current one", () => {
    expect(passwordChangeBody("old-password", "a-new-long-one", "a-new-long-one")).toEqual({
      body: { password: "a-new-long-one", current_password: "old-password" },
      error: null,
    });
  });

  it("sends nothing without the current password", () => {
    expect(passwordChangeBody("", "a-new-long-one", "a-new-long-one")).toEqual({
      body: null,
      error: "Type your current password.",
    });
  });

  it("refuses a short, mistyped or unchanged new password", () => {
    expect(passwordChangeBody("old-password", "short", "short").error).toBe(
      "The new password needs at least 10 characters.",
    );
    expect(passwordChangeBody("old-password", "a-new-long-one", "a-new-long-0ne").error).toBe(
      "The two new passwords differ.",
    );
    expect(passwordChangeBody("same-password", "same-password", "same-password").error).toBe(
      "The new password is the current one.",
    );
  });
});
