import { describe, expect, it } from "vitest";
import { ApiProblem } from "../api/client";
import { loginErrorText, passwordErrorText } from "./problems";

describe("passwordErrorText", () => {
  it("says which password was wrong, and the wait when throttled", () => {
    expect(passwordErrorText(new ApiProblem(403, "Permission Denied", "current_password is not your password"))).toBe(
      "That is not your current password.",
    );
    expect(passwordErrorText(new ApiProblem(429, "Throttled", "slow down", 2))).toBe(
      "Too many wrong passwords from this address. Try again in 2 s.",
    );
    expect(passwordErrorText(new ApiProblem(422, "Invalid Input", "password: too short"))).toBe(
      "Invalid input: password: too short",
    );
  });
});

describe("loginErrorText", () => {
  it("says wrong password for a 401", () => {
    expect(loginErrorText(new ApiProblem(401, "Not Authenticated", "wrong username or password"))).toBe(
      "Wrong username or password.",
    );
  });

  it("says throttled with the wait for a 429", () => {
    expect(loginErrorText(new ApiProblem(429, "Throttled", "slow down", 90))).toBe(
      "Too many failed logins for this user or address. Try again in 1 m 30 s.",
    );
  });

  it("shows other problems as title and detail", () => {
    expect(loginErrorText(new ApiProblem(500, "Internal Server Error", "boom"))).toBe(
      "Internal Server Error: boom",
    );
  });
});
