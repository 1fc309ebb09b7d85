// The `parley` binary as one ES module: the project's own modules and its pure-JavaScript dependencies bundled,
// so that start-up reads one file instead of resolving and compiling a few hundred (a third of the gateway's
// start-up went to that). Left to node_modules: the native SQLite driver, and what loads only on demand
// (PostgreSQL's driver, the tokenizer's 65 MB of tables, YAML).
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
  external: ["better-sqlite3", "pg", "gpt-tokenizer", "yaml"],
  // Bundled CommonJS dependencies call `require` for Node's own modules; an ES module has none of its own.
  banner: {
    js: "import { createRequire as __parleyRequire } from 'node:module'; const require = __parleyRequire(import.meta.url);",
  },
  // Whitespace and syntax only: names stay, so stack traces still read; the source map points into dist/.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: "linked",
  logLevel: "warning",
});
