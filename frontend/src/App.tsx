// Routes compose pages; every page but the login needs a signed-in user (or demo mode).
import { Route, Routes } from "react-router";
import { Layout } from "./components/Layout";
import { AlertsPage } from "./pages/AlertsPage";
import { RequireAuth } from "./components/RequireAuth";
import { ClusterPage } from "./pages/ClusterPage";
import { ComparePage } from "./pages/ComparePage";
import { EpisodePage } from "./pages/EpisodePage";
import { EpisodesPage } from "./pages/EpisodesPage";
import { InboxPage } from "./pages/InboxPage";
import { JournalPage } from "./pages/JournalPage";
import { LoginPage } from "./pages/LoginPage";
import { NotFoundPage } from "./pages/NotFoundPage";
import { OverviewPage } from "./pages/OverviewPage";
import { SettingsPage } from "./pages/SettingsPage";
import { WorkersPage } from "./pages/WorkersPage";

export function App() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route
        element={
          <RequireAuth>
            <Layout />
          </RequireAuth>
        }
      >
        <Route index element={<OverviewPage />} />
        <Route path="clusters/:clusterId" element={<ClusterPage />} />
        <Route path="clusters/:clusterId/journal" element={<JournalPage />} />
        <Route path="clusters/:clusterId/episodes" element={<EpisodesPage />} />
        <Route path="clusters/:clusterId/episodes/:episodeId" element={<EpisodePage />} />
        <Route path="clusters/:clusterId/compare" element={<ComparePage />} />
        <Route path="clusters/:clusterId/workers" element={<WorkersPage />} />
        <Route path="alerts" element={<AlertsPage />} />
        <Route path="inbox" element={<InboxPage />} />
        <Route path="settings/*" element={<SettingsPage />} />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}
