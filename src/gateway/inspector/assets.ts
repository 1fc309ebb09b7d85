import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The page's script and styles, built by `npm run build` (`scripts/build-inspector.mjs`) into `dist/inspector/`:
 * found beside the CLI bundle (`dist/parley.js`), beside the library (`dist/gateway/inspector/`), or from the
 * sources (tests). Read once, on the first request for them.
 */
const CANDIDATES = ["./inspector/", "../../inspector/", "../../../dist/inspector/"];

export interface PageAssets {
  script: string;
  styles: string;
}

let loaded: PageAssets | undefined;

export function pageAssets(): PageAssets | undefined {
  if (loaded !== undefined) return loaded;
  for (const candidate of CANDIDATES) {
    const folder = fileURLToPath(new URL(candidate, import.meta.url));
    if (!existsSync(`${folder}inspector.js`)) continue;
    loaded = {
      script: readFileSync(`${folder}inspector.js`, "utf8"),
      styles: readFileSync(`${folder}inspector.css`, "utf8"),
    };
    return loaded;
  }
  return undefined;
}

/** The page's document: no data in it, no inline script; the script asks the API (with the key) for the rest. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Parley inspector</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/inspect/assets/inspector.css">
<script type="module" src="/inspect/assets/inspector.js"></script>
</head>
<body>
<noscript>The inspector needs JavaScript.</noscript>
<main id="app"></main>
</body>
</html>
`;
