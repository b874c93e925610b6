// Loading, empty and error states: every view that waits on the API shows one of these.
import type { ReactNode } from "react";
import { ApiProblem } from "../api/client";

export function Loading({ what }: { what: string }) {
  return (
    <p className="state state-loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="state state-empty">{children}</div>;
}

/** An API problem as its title and detail (as text: details can quote a monitored server). */
export function ProblemView({ error, what }: { error: unknown; what?: string }) {
  const title =
    error instanceof ApiProblem
      ? error.title
      : error instanceof Error
        ? error.name
        : "Something went wrong";
  const detail = error instanceof ApiProblem ? error.detail : error instanceof Error ? error.message : "";
  return (
    <div className="state state-error" role="alert">
      <strong>
        {what ? `Could not load ${what}: ` : ""}
        {title}
      </strong>
      {detail ? <p>{detail}</p> : null}
    </div>
  );
}
