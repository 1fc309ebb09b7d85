import { readdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type BenchModule, type BenchSection, machineNote } from "./harness.js";

/**
 * `npm run bench`: runs every `bench/*.bench.ts` (or those named on the command line) and writes
 * docs/benchmarks.md. Every figure there is a ratio measured side by side in the same run.
 */
const HEADLINE = "peer.bench.ts";
const here = fileURLToPath(new URL(".", import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((file) => file.endsWith(".bench.ts"))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.includes(name)))
  .sort()
  // The headline first: Parley as users run it, against its peers and the floor.
  .sort((a, b) => Number(b === HEADLINE) - Number(a === HEADLINE));

const sections: BenchSection[] = [];
for (const file of files) {
  const module = (await import(new URL(file, import.meta.url).href)) as { default: BenchModule };
  process.stderr.write(`bench: ${file}\n`);
  const section = await module.default();
  sections.push(section);
  process.stderr.write(`${section.markdown}\n\n`);
}

const document = [
  "# Benchmarks",
  "",
  "Written by `npm run bench`. These machines are shared and noisy, so every figure is a ratio of two",
  "measurements taken side by side in the same run (alternating rounds, medians), never a bare time.",
  "",
  `Machine: ${machineNote()}. Run: ${new Date().toISOString()}.`,
  "",
  ...sections.flatMap((section) => [`## ${section.title}`, "", section.markdown, ""]),
].join("\n");

if (wanted.length === 0) writeFileSync(new URL("../docs/benchmarks.md", import.meta.url), document);
else process.stdout.write(document);
