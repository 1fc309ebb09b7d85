// The `parley` binary as one ES module: the project's own modules bundled, its dependencies left to
// node_modules. Loading ~100 small modules one by one costs a third of the gateway's start-up; one file does not.
import { argv } from "node:process";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const [entry = `${root}dist/cli/main.js`, outfile = `${root}dist/parley.js`] = argv.slice(2);

await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  sourcemap: "linked",
  logLevel: "warning",
});
