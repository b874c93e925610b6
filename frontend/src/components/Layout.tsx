import { NavLink, Outlet, useNavigate } from "react-router";
import { useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import { clearToken, readToken } from "../api/auth";
import { useMe } from "../hooks/useMe";
import { HealthStrip } from "./HealthStrip";
import { ThemeToggle } from "./ThemeToggle";

export function Layout() {
  const me = useMe();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const signedIn = readToken() !== null;

  async function logout() {
    try {
      await api.POST("/api/v1/auth/logout");
    } finally {
      clearToken();
      queryClient.clear();
      navigate("/login");
    }
  }

  return (
    <div className="app">
      <header className="topbar">
        <NavLink to="/" className="brand" aria-label="Lagscope overview">
          Lagscope
        </NavLink>
        <nav aria-label="Main">
          <NavLink to="/" end>
            Overview
          </NavLink>
          <NavLink to="/alerts">Alerts</NavLink>
          {me.data?.demo ? <NavLink to="/inbox">Inbox</NavLink> : null}
          <NavLink to="/settings">Settings</NavLink>
        </nav>
        <div className="who">
          <ThemeToggle />
          {me.data ? (
            <span>
              {me.data.username} <span className="muted">({me.data.role})</span>
            </span>
          ) : null}
          {signedIn ? (
            <button type="button" className="link" onClick={() => void logout()}>
              Log out
            </button>
          ) : (
            <span className="badge">demo mode</span>
          )}
        </div>
      </header>
      <HealthStrip />
      <main>
        <Outlet />
      </main>
    </div>
  );
}
