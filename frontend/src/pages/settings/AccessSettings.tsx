// Settings → users (admins), API tokens (everyone: their own; admins: all), your password.
import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";
import type { Schemas } from "../../api/client";
import { Loading, ProblemView } from "../../components/States";
import { formatDateTime } from "../../format/format";
import { useCreateToken, useRevokeToken, useTokens } from "../../hooks/useTokens";
import { useChangeOwnPassword, useCreateUser, useDeleteUser, useUpdateUser, useUsers } from "../../hooks/useUsers";
import { passwordErrorText } from "../../format/problems";
import { MIN_PASSWORD, passwordChangeBody } from "../../viewmodels/passwordForm";

type Role = Schemas["UserIn"]["role"];
const ROLES: NonNullable<Role>[] = ["viewer", "editor", "admin"];

export function UsersSettings({ me }: { me: Schemas["MeOut"] }) {
  const users = useUsers(me.role === "admin");
  const create = useCreateUser();
  const update = useUpdateUser();
  const remove = useDeleteUser();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<NonNullable<Role>>("viewer");

  if (me.role !== "admin") return <p className="muted">Only admins manage users.</p>;
  if (users.isPending) return <Loading what="users" />;
  if (users.error) return <ProblemView error={users.error} what="users" />;

  function add(event: FormEvent) {
    event.preventDefault();
    create.mutate({ username, password, role }, { onSuccess: () => (setUsername(""), setPassword("")) });
  }

  return (
    <div className="settings-section">
      <table className="data-table" aria-label="Users">
        <thead>
          <tr>
            <th scope="col">User</th>
            <th scope="col">Role</th>
            <th scope="col">State</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {users.data.map((u) => (
            <tr key={u.id} data-user={u.username}>
              <td>{u.username}</td>
              <td>
                <select
                  aria-label={`Role of ${u.username}`}
                  value={u.role}
                  onChange={(e) => update.mutate({ id: u.id, body: { role: e.target.value as NonNullable<Role> } })}
                >
                  {ROLES.map((r) => (
                    <option key={r}>{r}</option>
                  ))}
                </select>
              </td>
              <td>{u.disabled ? <span className="tone-bad">disabled</span> : "active"}</td>
              <td className="row-actions">
                <button type="button" className="link" onClick={() => update.mutate({ id: u.id, body: { disabled: !u.disabled } })}>
                  {u.disabled ? "Enable" : "Disable"}
                </button>
                <button type="button" className="link danger" onClick={() => remove.mutate(u.id)} aria-label={`Delete user ${u.username}`}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {update.error || remove.error ? <ProblemView error={update.error ?? remove.error} /> : null}
      <form className="card inline-form" onSubmit={add} aria-label="Add user">
        <label>
          Username
          <input value={username} onChange={(e) => setUsername(e.target.value)} required autoComplete="off" />
        </label>
        <label>
          Password (10+ characters)
          <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} minLength={10} required autoComplete="new-password" />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.target.value as NonNullable<Role>)}>
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary" disabled={create.isPending}>
          Add user
        </button>
      </form>
      {create.error ? <ProblemView error={create.error} /> : null}
    </div>
  );
}

export function TokensSettings({ me }: { me: Schemas["MeOut"] }) {
  const tokens = useTokens();
  const create = useCreateToken();
  const revoke = useRevokeToken();
  const [name, setName] = useState("");
  const [days, setDays] = useState("");

  if (tokens.isPending) return <Loading what="tokens" />;
  if (tokens.error) return <ProblemView error={tokens.error} what="tokens" />;

  function add(event: FormEvent) {
    event.preventDefault();
    create.mutate({ name, expires_in_days: days ? Number(days) : null }, { onSuccess: () => setName("") });
  }

  return (
    <div className="settings-section">
      <table className="data-table" aria-label="Tokens">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            {me.role === "admin" ? <th scope="col">User</th> : null}
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {tokens.data.map((t) => (
            <tr key={t.id}>
              <td>{t.name}</td>
              <td>{t.kind}</td>
              {me.role === "admin" ? <td>{t.username}</td> : null}
              <td>{formatDateTime(Date.parse(t.created_at))}</td>
              <td>{t.expires_at ? formatDateTime(Date.parse(t.expires_at)) : "never"}</td>
              <td>{t.last_used_at ? formatDateTime(Date.parse(t.last_used_at)) : "never"}</td>
              <td>
                <button type="button" className="link danger" onClick={() => revoke.mutate(t.id)} aria-label={`Revoke token ${t.name}`}>
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {revoke.error ? <ProblemView error={revoke.error} /> : null}
      {me.role !== "viewer" ? (
        <form className="card inline-form" onSubmit={add} aria-label="Create API token">
          <label>
            Token name
            <input value={name} onChange={(e) => setName(e.target.value)} required />
          </label>
          <label>
            Expires in (days, empty: never)
            <input value={days} onChange={(e) => setDays(e.target.value)} inputMode="decimal" />
          </label>
          <button type="submit" className="primary" disabled={create.isPending}>
            Create token
          </button>
        </form>
      ) : null}
      {create.error ? <ProblemView error={create.error} /> : null}
      {create.data ? (
        <div className="card token-once" role="status">
          <strong>Copy this token now: it is not shown again.</strong>
          <pre>{create.data.token}</pre>
        </div>
      ) : null}
    </div>
  );
}

const SIGN_IN_AGAIN = `/login?next=${encodeURIComponent("/settings/password")}`;

export function PasswordSettings({ me }: { me: Schemas["MeOut"] }) {
  const change = useChangeOwnPassword();
  const navigate = useNavigate();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);

  if (me.user_id === null) return <p className="muted">The demo user has no password.</p>;
  const userId = me.user_id;

  function submit(event: FormEvent) {
    event.preventDefault();
    const built = passwordChangeBody(current, next, repeat);
    setInvalid(built.error);
    // Signed out everywhere: sign in again (with the new password) to come back here.
    if (built.body) change.mutate({ id: userId, body: built.body }, { onSuccess: () => navigate(SIGN_IN_AGAIN) });
  }

  return (
    <div className="settings-section">
      <form className="card inline-form" onSubmit={submit} aria-label="Change your password">
        <label>
          Current password
          <input type="password" value={current} onChange={(e) => setCurrent(e.target.value)} required autoComplete="current-password" />
        </label>
        <label>
          New password ({MIN_PASSWORD}+ characters)
          <input type="password" value={next} onChange={(e) => setNext(e.target.value)} minLength={MIN_PASSWORD} required autoComplete="new-password" />
        </label>
        <label>
          New password again
          <input type="password" value={repeat} onChange={(e) => setRepeat(e.target.value)} minLength={MIN_PASSWORD} required autoComplete="new-password" />
        </label>
        <button type="submit" className="primary" disabled={change.isPending}>
          Change password
        </button>
      </form>
      <p className="muted small">Changing it signs you out everywhere: every token you hold is revoked.</p>
      {invalid || change.error ? (
        <p className="state state-error" role="alert">
          {invalid ?? passwordErrorText(change.error)}
        </p>
      ) : null}
    </div>
  );
}
