// The inspector's page (src/inspect/page/): its script bundled for browsers and its styles, into
// dist/inspector/, where the gateway serves them from at /inspect/assets/. Run by `npm run build`, so by
// `npm install` too (its prepare script): the page exists after a plain install, nothing fetched from a CDN.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { argv } from "node:process";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const [outdir = `${root}dist/inspector`] = argv.slice(2);
const page = `${root}src/inspect/page`;

mkdirSync(outdir, { recursive: true });
await build({
  entryPoints: [`${page}/main.ts`],
  outfile: `${outdir}/inspector.js`,
  bundle: true,
  platform: "browser",
  format: "esm",
  target: "es2022",
  minify: true,
  // No source map: the gateway serves the script and the styles only.
  sourcemap: false,
  logLevel: "warning",
});
// The styles, in one file the page loads.
const styles = ["style.css", "exchange.css"].map((name) => readFileSync(`${page}/${name}`, "utf8"));
writeFileSync(`${outdir}/inspector.css`, styles.join("\n"));
