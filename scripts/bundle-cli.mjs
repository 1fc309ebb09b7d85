// The `parley` binary as one ES module: the project's own modules and its pure-JavaScript dependencies bundled,
// so that start-up reads one file instead of resolving and compiling a few hundred (a third of the gateway's
// start-up went to that). Left to node_modules: the native SQLite driver, and what loads only on demand
// (PostgreSQL's driver, the tokenizer's 65 MB of tables, YAML): optional packages of a library install.
// The `parley/gateway` subpath is bundled the same way, so that a library user needs none of the gateway's own
// dependencies (zod, pino, undici) installed. What the bundles hold of other packages is listed, with each
// package's licence, in dist/THIRD-PARTY-NOTICES.md.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { argv } from "node:process";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const [entry = `${root}dist/cli/main.js`, outfile = `${root}dist/parley.js`] = argv.slice(2);
const dist = dirname(outfile);

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
  // Whitespace and syntax only: names stay, so stack traces still read without a source map.
  minifyWhitespace: true,
  minifySyntax: true,
  metafile: true,
  logLevel: "warning",
  // The benchmark's profile names a frame by its source file: it builds a copy with maps (never shipped).
  sourcemap: process.env.PARLEY_BUNDLE_SOURCEMAP === "1",
};
const built = [await build({ ...options, entryPoints: [entry], outfile })];
// The worker threads start from files beside the bundle, bundled the same way: the tokenizer's
// (src/gateway/token-count.ts), the prepare threads' (src/gateway/off-loop/prepare-pool.ts: large requests, and the
// inspector's views of large traces, whose modules the bundle takes in) and the SQLite trace writer's
// (src/store/sqlite/trace-writer.ts). Both the CLI and the `parley/gateway` bundle find them there.
const compiled = dirname(dirname(entry));
for (const worker of [
  "gateway/token-count-worker.js",
  "gateway/off-loop/prepare-worker.js",
  "store/sqlite/trace-worker.js",
]) {
  built.push(
    await build({ ...options, entryPoints: [`${compiled}/${worker}`], outfile: `${dist}/${basename(worker)}` }),
  );
}
const gatewayEntry = `${compiled}/library/gateway.js`;
if (existsSync(gatewayEntry)) {
  built.push(await build({ ...options, entryPoints: [gatewayEntry], outfile: `${dist}/gateway.js` }));
}
writeFileSync(`${dist}/THIRD-PARTY-NOTICES.md`, notices(built));

/** Each package a bundle holds, with its licence file's text. */
function notices(results) {
  const packages = new Map();
  for (const { metafile } of results) {
    for (const input of Object.keys(metafile.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (match !== null) packages.set(match[1], join(root, "node_modules", match[1]));
    }
  }
  const sections = [...packages.entries()].sort().map(([name, folder]) => {
    const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
    const file = readdirSync(folder).find((candidate) => /^(licen[cs]e|copying)/i.test(candidate));
    const text = file === undefined ? `Licensed ${manifest.license}.` : readFileSync(join(folder, file), "utf8").trim();
    return `## ${name} ${manifest.version} (${manifest.license})\n\n\`\`\`\n${text}\n\`\`\`\n`;
  });
  return `# Third-party notices\n\nThe bundles in this folder (\`parley.js\`, \`gateway.js\`, \`token-count-worker.js\`, \`prepare-worker.js\`, \`trace-worker.js\`) hold these packages.\n\n${sections.join("\n")}`;
}
