// The `parley` binary as one ES module: the project's own modules and its pure-JavaScript dependencies bundled,
// so that start-up reads one file instead of resolving and compiling a few hundred (a third of the gateway's
// start-up went to that). Left to node_modules: the native SQLite driver, and what loads only on demand
// (PostgreSQL's driver, the tokenizer's 65 MB of tables, YAML).
import { basename, dirname } from "node:path";
import { argv } from "node:process";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const [entry = `${root}dist/cli/main.js`, outfile = `${root}dist/parley.js`] = argv.slice(2);

const options = {
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
};
await build({ ...options, entryPoints: [entry], outfile });
// The worker threads start from files beside the bundle, bundled the same way: the tokenizer's
// (src/gateway/token-count.ts) and the SQLite trace writer's (src/store/sqlite/trace-writer.ts).
const compiled = dirname(dirname(entry));
for (const worker of ["gateway/token-count-worker.js", "store/sqlite/trace-worker.js"]) {
  await build({
    ...options,
    entryPoints: [`${compiled}/${worker}`],
    outfile: `${dirname(outfile)}/${basename(worker)}`,
  });
}
