#!/usr/bin/env node
// The `extlb` command as npm links it. npm links a package's bin when it installs the package
// (for a workspace, at `npm ci`), before the TypeScript is built, and it links only a file that
// exists; so the bin is this small committed, executable file, which loads the built entry point.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/bin.js', import.meta.url);
if (existsSync(entry)) {
  await import(entry.href);
} else {
  process.stderr.write('extlb is not built yet: run `npm run build` (or `npm start`) at the root of the extlb repository, then try again.\n');
  process.exitCode = 1;
}
