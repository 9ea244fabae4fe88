/**
 * Builds the dashboard page into dist/src/dashboard/ui, where the server
 * (src/dashboard/routes.ts) serves it under /dashboard/. Part of npm run build.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: '/dashboard/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: here('../../dist/src/dashboard/ui'),
    emptyOutDir: true,
    // The CSP allows no inline script or style: every asset is a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
