// Routes compose pages; every page but the login needs a signed-in user (or demo mode).
// Each page is its own chunk, loaded when its route is first shown (React.lazy): the overview
// and the forms do not carry the chart library, and the explorer's first chart waits for the
// explorer's code only. The page the app opens on starts loading at once, beside the session
// check, rather than after it.
import { lazy, Suspense, type ComponentType, type LazyExoticComponent } from "react";
import { Route, Routes } from "react-router";
import { Layout } from "./components/Layout";
import { RequireAuth } from "./components/RequireAuth";
import { Loading } from "./components/States";
import { pageFor, type PageName } from "./pageFor";

type Loader = () => Promise<ComponentType>;

/** A page chunk, loaded once (the import's promise is kept: a second call reuses it). */
function chunk(load: Loader): { load: Loader; Page: LazyExoticComponent<ComponentType> } {
  let loading: Promise<ComponentType> | null = null;
  const once = () => (loading ??= load());
  return { load: once, Page: lazy(() => once().then((Page) => ({ default: Page }))) };
}

const pages: Record<PageName, ReturnType<typeof chunk>> = {
  overview: chunk(() => import("./pages/OverviewPage").then((m) => m.OverviewPage)),
  cluster: chunk(() => import("./pages/ClusterPage").then((m) => m.ClusterPage)),
  journal: chunk(() => import("./pages/JournalPage").then((m) => m.JournalPage)),
  episodes: chunk(() => import("./pages/EpisodesPage").then((m) => m.EpisodesPage)),
  episode: chunk(() => import("./pages/EpisodePage").then((m) => m.EpisodePage)),
  compare: chunk(() => import("./pages/ComparePage").then((m) => m.ComparePage)),
  workers: chunk(() => import("./pages/WorkersPage").then((m) => m.WorkersPage)),
  alerts: chunk(() => import("./pages/AlertsPage").then((m) => m.AlertsPage)),
  inbox: chunk(() => import("./pages/InboxPage").then((m) => m.InboxPage)),
  settings: chunk(() => import("./pages/SettingsPage").then((m) => m.SettingsPage)),
  login: chunk(() => import("./pages/LoginPage").then((m) => m.LoginPage)),
  notFound: chunk(() => import("./pages/NotFoundPage").then((m) => m.NotFoundPage)),
};

// Start fetching the first page's chunk now, in parallel with the session check.
if (typeof window !== "undefined") void pages[pageFor(window.location.pathname)].load();

function show(name: PageName) {
  const { Page } = pages[name];
  return (
    <Suspense fallback={<Loading what="the page" />}>
      <Page />
    </Suspense>
  );
}

export function App() {
  return (
    <Routes>
      <Route path="/login" element={show("login")} />
      <Route
        element={
          <RequireAuth>
            <Layout />
          </RequireAuth>
        }
      >
        <Route index element={show("overview")} />
        <Route path="clusters/:clusterId" element={show("cluster")} />
        <Route path="clusters/:clusterId/journal" element={show("journal")} />
        <Route path="clusters/:clusterId/episodes" element={show("episodes")} />
        <Route path="clusters/:clusterId/episodes/:episodeId" element={show("episode")} />
        <Route path="clusters/:clusterId/compare" element={show("compare")} />
        <Route path="clusters/:clusterId/workers" element={show("workers")} />
        <Route path="alerts" element={show("alerts")} />
        <Route path="inbox" element={show("inbox")} />
        <Route path="settings/*" element={show("settings")} />
        <Route path="*" element={show("notFound")} />
      </Route>
    </Routes>
  );
}
