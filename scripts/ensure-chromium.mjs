// The headless Chromium the inspector's browser tests drive: Debian's `chromium` package, installed with apt
// when it is missing (the test set-up calls this; Playwright's own browser download is never used). Exits 1,
// saying why, where it cannot be installed.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

export const CHROMIUM = "/usr/bin/chromium";

export function ensureChromium() {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  const apt = (args) =>
    execFileSync("apt-get", args, {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      timeout: 15 * 60_000,
    });
  try {
    apt(["update"]);
    apt(["install", "-y", "--no-install-recommends", "chromium", "fonts-dejavu-core"]);
  } catch (error) {
    throw new Error(
      `the browser tests need ${CHROMIUM}: 'apt-get install -y chromium' failed (${String(error.stderr ?? error.message)
        .trim()
        .slice(-500)})`,
    );
  }
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium, but ${CHROMIUM} is not there`);
  return CHROMIUM;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    console.log(ensureChromium());
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
