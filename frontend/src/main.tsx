import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { BrowserRouter } from "react-router";
import { ApiProblem } from "./api/client";
import { App } from "./App";
import { prefetchFor } from "./prefetch";
import { startTheme } from "./theme/themeStore";
import "./styles.css";

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A problem the API answered (4xx) will not go away by asking again; a dropped
      // connection or a 5xx might.
      retry: (failures, error) =>
        failures < 2 && !(error instanceof ApiProblem && error.status >= 400 && error.status < 500),
      refetchOnWindowFocus: false,
    },
  },
});

startTheme();
void prefetchFor(queryClient, window.location.pathname, window.location.search);

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root");
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <App />
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
