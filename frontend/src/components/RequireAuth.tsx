import { useEffect, type ReactNode } from "react";
import { Navigate, useLocation } from "react-router";
import { useQueryClient } from "@tanstack/react-query";
import { ApiProblem, onUnauthorized } from "../api/client";
import { keys } from "../hooks/keys";
import { useMe } from "../hooks/useMe";
import { Loading, ProblemView } from "./States";

/** Renders its children for a signed-in user (or in demo mode); otherwise sends to /login. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const me = useMe();
  const location = useLocation();
  const queryClient = useQueryClient();

  // A token that expires or is revoked while a page is open: forget who we were.
  useEffect(
    () => onUnauthorized(() => void queryClient.invalidateQueries({ queryKey: keys.me() })),
    [queryClient],
  );

  if (me.isPending) return <Loading what="your session" />;
  if (me.error instanceof ApiProblem && me.error.status === 401) {
    const next = `${location.pathname}${location.search}`;
    return <Navigate to={`/login?next=${encodeURIComponent(next)}`} replace />;
  }
  if (me.error) return <ProblemView error={me.error} what="your session" />;
  return children;
}
