// npm links `bin` targets but does not chmod them when installed from the repository root.
import { chmodSync, existsSync } from "node:fs";

const bin = new URL("../dist/parley.js", import.meta.url);
if (existsSync(bin)) chmodSync(bin, 0o755);
