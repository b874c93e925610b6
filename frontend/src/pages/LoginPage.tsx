import { useEffect, useRef, useState, type FormEvent } from "react";
import { Navigate, useNavigate, useSearchParams } from "react-router";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { storeToken } from "../api/auth";
import { loginErrorText, ssoErrorText } from "../format/problems";
import { keys } from "../hooks/keys";
import { useAuthMethods } from "../hooks/useAuthMethods";
import { useMe } from "../hooks/useMe";

function safeNext(next: string | null): string {
  // Only a path on this site: never an open redirect to another origin.
  return next && next.startsWith("/") && !next.startsWith("//") ? next : "/";
}

export function LoginPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const me = useMe();
  const methods = useAuthMethods();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const next = safeNext(params.get("next"));
  // Back from single sign-on (/login?sso=1): collect its outcome, once.
  const back = params.get("sso") === "1";
  const collected = useRef(false);

  const login = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/auth/login", { body: { username, password } })),
    onSuccess: async ({ token }) => {
      storeToken(token);
      await queryClient.invalidateQueries({ queryKey: keys.me() });
      navigate(next, { replace: true });
    },
  });

  const sso = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/auth/oidc/session")),
    onSuccess: async ({ token, next: then }) => {
      storeToken(token);
      await queryClient.invalidateQueries({ queryKey: keys.me() });
      navigate(safeNext(then), { replace: true });
    },
  });
  const collect = sso.mutate;
  useEffect(() => {
    if (back && !collected.current) {
      collected.current = true;
      collect();
    }
  }, [back, collect]);

  // Signed in already; not while a sign-in navigates on by itself (single sign-on's page to
  // return to is not this URL's `next`).
  if (me.data && !login.isPending && sso.isIdle) return <Navigate to={next} replace />;

  function submit(event: FormEvent) {
    event.preventDefault();
    login.mutate();
  }

  const ssoName = methods.data?.sso_name ?? null;
  // Until the API says, no form (it may be off); if it cannot say, the password form.
  const passwordMode = methods.data?.password ?? (methods.isPending ? null : "on");
  const fields = (
    <>
      <label>
        Username
        <input
          name="username"
          autoComplete="username"
          value={username}
          onChange={(e) => setUsername(e.target.value)}
          required
          autoFocus={!ssoName}
        />
      </label>
      <label>
        Password
        <input
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          required
        />
      </label>
      {login.error ? (
        <p className="form-error" role="alert">
          {loginErrorText(login.error)}
        </p>
      ) : null}
      <button type="submit" className={ssoName ? undefined : "primary"} disabled={login.isPending}>
        {login.isPending ? "Signing in…" : "Sign in"}
      </button>
    </>
  );

  return (
    <main className="login">
      <form className="card login-card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Lagscope</h1>
        <p className="muted">Sign in to see replication lag.</p>
        {sso.isPending ? <p className="muted">Signing in…</p> : null}
        {sso.error ? (
          <p className="form-error" role="alert">
            {ssoErrorText(sso.error)}
          </p>
        ) : null}
        {ssoName ? (
          // A navigation, not a fetch: the provider's sign-in page comes next.
          <a className="sso-button" href={`/api/v1/auth/oidc/start?next=${encodeURIComponent(next)}`}>
            Sign in with {ssoName}
          </a>
        ) : null}
        {passwordMode === "on" ? fields : null}
        {passwordMode === "break_glass" ? (
          <details className="break-glass">
            <summary>Break-glass sign-in with a password</summary>
            {fields}
          </details>
        ) : null}
      </form>
    </main>
  );
}
