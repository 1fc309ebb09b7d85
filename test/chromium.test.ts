import { expect, test } from "vitest";
import { chromiumPath } from "./support/chromium.js";

/** The browser tests fail, saying how to install Chromium, where there is none: they never skip. */
test("no Chromium: an error that names the package to install", () => {
  expect(() => chromiumPath({ PATH: "/nonexistent" })).toThrow(/apt-get install -y chromium/);
  expect(() => chromiumPath({ PARLEY_CHROMIUM: "/nonexistent/chromium" })).toThrow(/does not exist/);
  expect(chromiumPath({ PATH: process.env.PATH })).toMatch(/chromium/);
});
