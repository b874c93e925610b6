import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { instanceCreate, instanceFormValues, instancePatch, passwordReasons } from "./instanceForm";

const stored: Schemas["InstanceOut"] = {
  id: 7,
  cluster_id: 1,
  name: "db2",
  host: "10.0.0.2",
  port: 3306,
  user: "lagscope",
  has_password: true,
  role: "replica",
  region: "beijing",
  enabled: true,
  tls: "preferred",
  tls_ca_path: null,
  flavor: "mariadb",
  version: "11.8.3",
  server_id: 2,
  last_ok_at: null,
  last_error: null,
};

describe("instancePatch", () => {
  it("sends nothing for an untouched form, and no password", () => {
    expect(instancePatch(stored, instanceFormValues(stored))).toEqual({});
  });

  it("sends only the changed field: a new region keeps the stored password", () => {
    const edited = { ...instanceFormValues(stored), region: "ningxia" };
    expect(instancePatch(stored, edited)).toEqual({ region: "ningxia" });
    expect(passwordReasons(stored, edited)).toEqual([]);
  });

  it("a typed password is sent even when nothing else changed", () => {
    expect(instancePatch(stored, { ...instanceFormValues(stored), password: "s3cret" })).toEqual({
      password: "s3cret",
    });
  });

  it("a move needs the password, and never sends an empty one in its place by itself", () => {
    const moved = { ...instanceFormValues(stored), host: "10.0.0.9 ", port: "3307" };
    expect(passwordReasons(stored, moved)).toEqual([
      "host, port changed: the stored password is not sent to a new address",
    ]);
    expect(instancePatch(stored, { ...moved, password: "pw" })).toEqual({
      host: "10.0.0.9",
      port: 3307,
      password: "pw",
    });
    // "no password" is a choice the user makes for an account without one.
    expect(instancePatch(stored, { ...moved, noPassword: true })).toEqual({ host: "10.0.0.9", port: 3307, password: "" });
  });

  it("a new user is a move too; a new name is not", () => {
    expect(passwordReasons(stored, { ...instanceFormValues(stored), user: "monitor" })).toHaveLength(1);
    expect(passwordReasons(stored, { ...instanceFormValues(stored), name: "db2-old" })).toEqual([]);
  });
});

describe("instanceCreate", () => {
  it("sends every field, trimmed", () => {
    const values = { ...instanceFormValues(), name: " db3 ", user: "mon", password: "pw", region: "far" };
    expect(instanceCreate(4, values)).toEqual({
      cluster_id: 4,
      name: "db3",
      host: "127.0.0.1",
      port: 3306,
      user: "mon",
      password: "pw",
      role: "replica",
      region: "far",
    });
  });
});
