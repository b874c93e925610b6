/// <reference types="vitest/config" />
// The UI is built into dist/ and served by the API process at "/". In development
// (`npm run dev`) Vite proxies the API to LAGSCOPE_API (default: a `make demo` on :8000).
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

const api = process.env.LAGSCOPE_API ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: { "/api": api, "/healthz": api, "/readyz": api, "/metrics": api },
  },
  build: {
    outDir: "dist",
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
    // Pages are loaded per route (App.tsx); the chart library and its own dependencies make one
    // chunk that only the chart pages load, so the overview, the forms and the login skip it.
    rolldownOptions: {
      output: {
        codeSplitting: {
          // Not the group's dependencies too: React would follow recharts into the group.
          includeDependenciesRecursively: false,
          groups: [
            {
              name: "charts",
              test: /node_modules[\\/](recharts|d3-[a-z-]+|victory-vendor|@reduxjs|react-redux|redux|redux-thunk|immer|reselect|es-toolkit|eventemitter3|decimal\.js-light|tiny-invariant|internmap|use-sync-external-store)[\\/]/,
            },
          ],
        },
      },
    },
  },
  test: {
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
    environment: "node",
  },
});
