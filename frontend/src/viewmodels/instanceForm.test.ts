import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import {
  connectionTestBody,
  instanceCreate,
  instanceFormValues,
  instancePatch,
  passwordReasons,
} from "./instanceForm";

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
  server_public_key_path: null,
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
      tls: "preferred",
      tls_ca_path: null,
      server_public_key_path: null,
    });
  });
});

describe("TLS settings", () => {
  const verifying: Schemas["InstanceOut"] = { ...stored, tls: "verify_ca", tls_ca_path: "/etc/lagscope/ca/db.pem" };

  it("a stronger mode is sent alone: the stored password is kept", () => {
    const edited = { ...instanceFormValues(stored), tls: "verify_identity" as const };
    expect(passwordReasons(stored, edited)).toEqual([]);
    expect(instancePatch(stored, edited)).toEqual({ tls: "verify_identity" });
  });

  it("a CA bundle path is sent with a verifying mode, and needs the password", () => {
    const edited = { ...instanceFormValues(stored), tls: "verify_ca" as const, tlsCaPath: " /etc/lagscope/ca/x.pem " };
    expect(passwordReasons(stored, edited)).toEqual([
      "CA bundle changed: the stored password is not sent under other trust",
    ]);
    expect(instancePatch(stored, { ...edited, password: "pw" })).toEqual({
      tls: "verify_ca",
      tls_ca_path: "/etc/lagscope/ca/x.pem",
      password: "pw",
    });
  });

  it("lowering the mode drops the CA path (\"\" removes it) and needs the password", () => {
    const edited = { ...instanceFormValues(verifying), tls: "required" as const };
    expect(passwordReasons(verifying, edited)).toEqual([
      "TLS lowered to required: the stored password is not sent under weaker protection",
    ]);
    expect(instancePatch(verifying, { ...edited, password: "pw" })).toEqual({
      tls: "required",
      tls_ca_path: "",
      password: "pw",
    });
  });

  it("an instance without a stored password changes TLS without one", () => {
    const bare = { ...verifying, has_password: false };
    expect(passwordReasons(bare, { ...instanceFormValues(bare), tls: "preferred" })).toEqual([]);
  });

  it("a new instance sends its mode, and the path only with a verifying mode", () => {
    const values = { ...instanceFormValues(), tls: "required" as const, tlsCaPath: "/etc/lagscope/ca/x.pem" };
    expect(instanceCreate(1, values)).toMatchObject({ tls: "required", tls_ca_path: null });
    expect(instanceCreate(1, { ...values, tls: "verify_identity" })).toMatchObject({
      tls: "verify_identity",
      tls_ca_path: "/etc/lagscope/ca/x.pem",
    });
  });
});

describe("connectionTestBody", () => {
  const address = {
    host: "10.0.0.2",
    port: 3306,
    user: "lagscope",
    tls: "preferred",
    tls_ca_path: null,
    server_public_key_path: null,
  };

  it("editing with the password field empty: instance_id, and no password at all", () => {
    const body = connectionTestBody(instanceFormValues(stored), stored);
    expect(body).toEqual({ ...address, instance_id: 7 });
    expect("password" in body).toBe(false);
  });

  it("editing a field that is not the address still uses the stored password", () => {
    const edited = { ...instanceFormValues(stored), name: "db2b", region: "ningxia", host: " 10.0.0.2 " };
    expect(connectionTestBody(edited, stored)).toEqual({ ...address, instance_id: 7 });
  });

  it("a typed password is sent, without instance_id", () => {
    const edited = { ...instanceFormValues(stored), password: "s3cret" };
    expect(connectionTestBody(edited, stored)).toEqual({ ...address, password: "s3cret" });
  });

  it("a moved address with the field empty still sends instance_id: the API refuses (422, retype it), no login", () => {
    const edited = { ...instanceFormValues(stored), port: "3307" };
    expect(passwordReasons(stored, edited)).not.toEqual([]);
    expect(connectionTestBody(edited, stored)).toEqual({ ...address, port: 3307, instance_id: 7 });
  });

  it("'the account has no password' sends an empty password, not the stored one", () => {
    const edited = { ...instanceFormValues(stored), user: "monitor", noPassword: true };
    expect(connectionTestBody(edited, stored)).toEqual({ ...address, user: "monitor", password: "" });
  });

  it("a new instance with no password typed tests with none", () => {
    const values = { ...instanceFormValues(), user: "lagscope" };
    expect(connectionTestBody(values)).toEqual({
      host: "127.0.0.1",
      port: 3306,
      user: "lagscope",
      password: "",
      tls: "preferred",
      tls_ca_path: null,
      server_public_key_path: null,
    });
  });

  it("sends the pinned public key, so the stored password is tested under the instance's own pin", () => {
    const pinned = { ...stored, server_public_key_path: "/etc/lagscope/ca/db2-public.pem" };
    expect(connectionTestBody(instanceFormValues(pinned), pinned)).toEqual({
      ...address,
      server_public_key_path: "/etc/lagscope/ca/db2-public.pem",
      instance_id: 7,
    });
  });
});

describe("the pinned server public key", () => {
  const key = "/etc/lagscope/ca/db2-public.pem";

  it("pinning a key needs the password (another recipient), removing it does not", () => {
    const edited = { ...instanceFormValues(stored), publicKeyPath: ` ${key} `, password: "pw" };
    expect(passwordReasons(stored, edited)).toEqual([
      "public key changed: the stored password is not encrypted for another key",
    ]);
    expect(instancePatch(stored, edited)).toEqual({ server_public_key_path: key, password: "pw" });
    const pinned = { ...stored, server_public_key_path: key };
    const removed = { ...instanceFormValues(pinned), publicKeyPath: "" };
    expect(passwordReasons(pinned, removed)).toEqual([]);
    expect(instancePatch(pinned, removed)).toEqual({ server_public_key_path: "" });
  });

  it("is sent only with tls preferred, the one mode where a session can lack TLS", () => {
    const values = { ...instanceFormValues(), publicKeyPath: key };
    expect(instanceCreate(1, values)).toMatchObject({ tls: "preferred", server_public_key_path: key });
    expect(instanceCreate(1, { ...values, tls: "required" })).toMatchObject({ server_public_key_path: null });
    const pinned = { ...stored, server_public_key_path: key };
    // Raising TLS drops the pin (the API refuses a pin it would never use).
    expect(instancePatch(pinned, { ...instanceFormValues(pinned), tls: "verify_identity" })).toEqual({
      tls: "verify_identity",
      server_public_key_path: "",
    });
  });
});
