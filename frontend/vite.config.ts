/// <reference types="vitest/config" />
// The UI is built into dist/ and served by the API process at "/". In development
// (`npm run dev`) Vite proxies the API to LAGSCOPE_API (default: a `make demo` on :8000).
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

const api = process.env.LAGSCOPE_API ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: { "/api": api, "/healthz": api, "/metrics": api },
  },
  build: {
    outDir: "dist",
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
  },
  test: {
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
    environment: "node",
  },
});
