import { NavLink, Navigate, Route, Routes } from "react-router";
import { Loading } from "../components/States";
import { useMe } from "../hooks/useMe";
import { PasswordSettings, TokensSettings, UsersSettings } from "./settings/AccessSettings";
import { AuditSettings } from "./settings/AuditSettings";
import { ServersSettings } from "./settings/ServersSettings";

export function SettingsPage() {
  const me = useMe();
  if (!me.data) return <Loading what="your role" />;
  const canEdit = me.data.role !== "viewer";
  return (
    <section className="page settings">
      <h1>Settings</h1>
      <nav className="tabs" aria-label="Settings">
        <NavLink to="/settings/servers">Servers</NavLink>
        {me.data.role === "admin" ? <NavLink to="/settings/users">Users</NavLink> : null}
        <NavLink to="/settings/tokens">API tokens</NavLink>
        {me.data.user_id !== null ? <NavLink to="/settings/password">Your password</NavLink> : null}
        {me.data.role === "admin" ? <NavLink to="/settings/audit">Audit</NavLink> : null}
      </nav>
      <Routes>
        <Route index element={<Navigate to="servers" replace />} />
        <Route path="servers" element={<ServersSettings canEdit={canEdit} />} />
        <Route path="users" element={<UsersSettings me={me.data} />} />
        <Route path="tokens" element={<TokensSettings me={me.data} />} />
        <Route path="password" element={<PasswordSettings me={me.data} />} />
        <Route path="audit" element={<AuditSettings me={me.data} />} />
      </Routes>
    </section>
  );
}
