// The instance form's values and what it sends: the whole body on create, only what changed on
// edit (PATCH). The stored password is write-only; the API keeps it unless `password` is sent,
// and refuses (422) to keep it for a new address or weaker TLS: the form asks for it then.
import type { Schemas } from "../api/client";

type Instance = Schemas["InstanceOut"];
export type TlsMode = Instance["tls"];
export type Role = Instance["role"];

/** The modes in order of protection (as the API orders them), with one line each (README "TLS"). */
export const TLS_MODES: readonly { mode: TlsMode; explain: string }[] = [
  {
    mode: "preferred",
    explain: "TLS when the server offers it, certificate not checked; clear text when it offers none.",
  },
  { mode: "required", explain: "TLS or no connection; the certificate is not checked." },
  {
    mode: "verify_ca",
    explain: "TLS, and the certificate must chain to the CA bundle (none: the system's CAs); the host name is not compared.",
  },
  {
    mode: "verify_identity",
    explain: "As verify_ca, and the certificate must name the host dialled: the only mode that stops a man in the middle.",
  },
];

export function verifies(tls: TlsMode): boolean {
  return tls === "verify_ca" || tls === "verify_identity";
}

export interface InstanceFormValues {
  name: string;
  host: string;
  port: string;
  user: string;
  /** "" = not typed (on edit: keep the stored one, where the API allows it). */
  password: string;
  /** On edit, when the password must be given again: the account has none (sends ""). */
  noPassword: boolean;
  role: Role;
  region: string;
  tls: TlsMode;
  tlsCaPath: string;
  /** The server's pinned RSA public key (PEM path), used only by tls preferred ("" = none). */
  publicKeyPath: string;
}

export function instanceFormValues(instance?: Instance): InstanceFormValues {
  return {
    name: instance?.name ?? "",
    host: instance?.host ?? "127.0.0.1",
    port: String(instance?.port ?? 3306),
    user: instance?.user ?? "",
    password: "",
    noPassword: false,
    role: instance?.role ?? "replica",
    region: instance?.region ?? "",
    tls: instance?.tls ?? "preferred",
    tlsCaPath: instance?.tls_ca_path ?? "",
    publicKeyPath: instance?.server_public_key_path ?? "",
  };
}

/** The CA bundle the values mean: none unless a verifying mode uses it ("" = none). */
function caPath(values: InstanceFormValues): string {
  return verifies(values.tls) ? values.tlsCaPath.trim() : "";
}

/**
 * The pinned public key the values mean: none unless tls is preferred, the only mode where a
 * session can lack TLS, the one place the API uses a pin (sha256_password / caching_sha2
 * logins; inside TLS the server reads the password itself). "" = none.
 */
export function publicKeyPath(values: InstanceFormValues): string {
  return values.tls === "preferred" ? values.publicKeyPath.trim() : "";
}

/** The address fields that differ from the stored instance (the API's TARGET_FIELDS). */
export function movedFields(original: Instance, edited: InstanceFormValues): ("host" | "port" | "user")[] {
  const moved: ("host" | "port" | "user")[] = [];
  if (edited.host.trim() !== original.host) moved.push("host");
  if (Number(edited.port) !== original.port) moved.push("port");
  if (edited.user.trim() !== original.user) moved.push("user");
  return moved;
}

/**
 * Why the stored password cannot be kept by this edit (empty: it can). Mirrors the API's
 * update_instance: a new host/port/user always needs it; lowering `tls`, changing the CA
 * bundle or pinning another public key needs it when one is stored (removing a pin does not:
 * it only makes the API refuse more).
 */
export function passwordReasons(original: Instance, edited: InstanceFormValues): string[] {
  const reasons: string[] = [];
  const moved = movedFields(original, edited);
  if (moved.length > 0) {
    reasons.push(`${moved.join(", ")} changed: the stored password is not sent to a new address`);
  }
  if (original.has_password) {
    const order = TLS_MODES.map((m) => m.mode);
    if (order.indexOf(edited.tls) < order.indexOf(original.tls)) {
      reasons.push(`TLS lowered to ${edited.tls}: the stored password is not sent under weaker protection`);
    } else if (caPath(edited) !== (original.tls_ca_path ?? "")) {
      reasons.push("CA bundle changed: the stored password is not sent under other trust");
    }
    const key = publicKeyPath(edited);
    if (key !== "" && key !== (original.server_public_key_path ?? "")) {
      reasons.push("public key changed: the stored password is not encrypted for another key");
    }
  }
  return reasons;
}

/** The PATCH body: only the fields that changed; `password` only when typed or needed. */
export function instancePatch(original: Instance, edited: InstanceFormValues): Schemas["InstancePatch"] {
  const body: Schemas["InstancePatch"] = {};
  if (edited.name.trim() !== original.name) body.name = edited.name.trim();
  if (edited.host.trim() !== original.host) body.host = edited.host.trim();
  if (Number(edited.port) !== original.port) body.port = Number(edited.port);
  if (edited.user.trim() !== original.user) body.user = edited.user.trim();
  if (edited.region !== original.region) body.region = edited.region;
  if (edited.tls !== original.tls) body.tls = edited.tls;
  // "" removes a stored path (the API's convention); unchanged: not sent.
  if (caPath(edited) !== (original.tls_ca_path ?? "")) body.tls_ca_path = caPath(edited);
  const key = publicKeyPath(edited);
  if (key !== (original.server_public_key_path ?? "")) body.server_public_key_path = key;
  if (passwordReasons(original, edited).length > 0) body.password = edited.noPassword ? "" : edited.password;
  else if (edited.password !== "") body.password = edited.password;
  return body;
}

export function instanceCreate(clusterId: number, values: InstanceFormValues): Schemas["InstanceIn"] {
  return {
    cluster_id: clusterId,
    name: values.name.trim(),
    host: values.host.trim(),
    port: Number(values.port),
    user: values.user.trim(),
    password: values.password,
    role: values.role,
    region: values.region,
    tls: values.tls,
    tls_ca_path: caPath(values) || null,
    server_public_key_path: publicKeyPath(values) || null,
  };
}

/**
 * "Test connection": a typed password is sent; on edit, an empty field sends `instance_id`
 * and no password, and the API tests with the stored one. It does so only for the stored
 * host, port and user (and no weaker TLS, same CA bundle, no other pinned key), exactly what passwordReasons
 * checks; otherwise it answers 422 "retype it" before connecting anywhere, rather than the
 * server's "access denied" for an empty password. "No password" (a new instance, or the
 * box ticked) sends "".
 */
export function connectionTestBody(values: InstanceFormValues, original?: Instance): Schemas["ConnectionTestIn"] {
  const body: Schemas["ConnectionTestIn"] = {
    host: values.host.trim(),
    port: Number(values.port),
    user: values.user.trim(),
    tls: values.tls,
    tls_ca_path: caPath(values) || null,
    server_public_key_path: publicKeyPath(values) || null,
  };
  if (values.password !== "") body.password = values.password;
  else if (original && !values.noPassword) body.instance_id = original.id;
  else body.password = "";
  return body;
}
