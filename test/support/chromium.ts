import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

/**
 * A real headless Chromium for the inspector's end-to-end tests: the system's own (Debian's `chromium` package,
 * which `.ci/run` installs), driven through playwright-core, which downloads no browser. `PARLEY_CHROMIUM` names
 * another executable. A missing browser is an error that says how to install it, never a skipped test.
 */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const named = env.PARLEY_CHROMIUM;
  if (named !== undefined && named !== "") {
    if (!existsSync(named)) throw new Error(`PARLEY_CHROMIUM names ${named}, which does not exist`);
    return named;
  }
  for (const name of ["chromium", "chromium-browser"]) {
    const found = spawnSync("/bin/sh", ["-c", `command -v ${name}`], {
      encoding: "utf8",
      env: { PATH: env.PATH ?? "" },
    }).stdout.trim();
    if (found !== "") return found;
  }
  throw new Error(
    "the inspector's browser tests need Chromium: install it (Debian: apt-get install -y chromium, as .ci/run does) " +
      "or set PARLEY_CHROMIUM to its executable",
  );
}

/** Flags for a quiet browser that talks to nothing but the page under test. */
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh profile (its own user data folder, removed on close) in a headless Chromium. */
export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "parley-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: ARGS,
    viewport: { width: 1440, height: 900 },
    timeout: 60_000,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
