// The instance form's values and what it sends: the whole body on create, only what changed on
// edit (PATCH). The stored password is write-only; the API keeps it unless `password` is sent,
// and refuses (422) to keep it for a new address: the form asks for it then.
import type { Schemas } from "../api/client";

type Instance = Schemas["InstanceOut"];
export type Role = Instance["role"];

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
  };
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
 * update_instance: a new host/port/user always needs it.
 */
export function passwordReasons(original: Instance, edited: InstanceFormValues): string[] {
  const reasons: string[] = [];
  const moved = movedFields(original, edited);
  if (moved.length > 0) {
    reasons.push(`${moved.join(", ")} changed: the stored password is not sent to a new address`);
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
  };
}

export function connectionTestBody(values: InstanceFormValues): Schemas["ConnectionTestIn"] {
  return {
    host: values.host.trim(),
    port: Number(values.port),
    user: values.user.trim(),
    password: values.password,
  };
}
