// llama.cpp's `llama-server` and a tiny generated model for the end-to-end tests against a real model server.
//
// The source is the git bundle that the npm package node-llama-cpp ships (`npm pack`, never `npm install`: no
// package script runs), pinned by version and commit and checked; the model is written by the project's own
// generator (`tiny-model.py`, beside this file) with llama.cpp's `gguf-py` from the same source. Both are cached
// outside the repository, under `$XDG_CACHE_HOME/parley-test/llama-server/` (or `~/.cache/...`), keyed by their
// inputs, so a second run is instant. A lock keeps parallel test files from building twice: the first one builds,
// the others wait for it.
//
// Run directly, it prints one JSON line `{binary, model, version, commit}` on stdout and its progress on stderr;
// the tests' helper (`test/support/llama-server.ts`) runs it that way. Needs git, cmake, g++ (ninja if present)
// and python3 with numpy and PyYAML; `.ci/run` installs them where they are missing.
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = "node-llama-cpp";
const PACKAGE_VERSION = "3.21.1";
const COMMIT = "80fb11ac73e66d89eae2c6a91d8a77428fa733ed";

/** Offline (no web UI download, no TLS), portable (no -march=native), one static binary, nothing else built. */
const CMAKE_FLAGS = [
  "-DCMAKE_BUILD_TYPE=Release",
  "-DLLAMA_USE_PREBUILT_UI=OFF",
  "-DLLAMA_BUILD_UI=OFF",
  "-DLLAMA_OPENSSL=OFF",
  "-DGGML_NATIVE=OFF",
  "-DBUILD_SHARED_LIBS=OFF",
  "-DLLAMA_BUILD_TESTS=OFF",
  "-DLLAMA_BUILD_EXAMPLES=OFF",
];

const here = dirname(fileURLToPath(import.meta.url));
const GENERATOR = join(here, "tiny-model.py");

/**
 * How long a process waits for another one's build (5-7 minutes on two quiet cores, 25 on two cores shared with
 * other jobs); a lock whose process is gone is taken over at once.
 */
const LOCK_WAIT_MS = 45 * 60_000;

function cacheRoot(env = process.env) {
  const cacheHome = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(cacheHome, "parley-test", "llama-server");
}

function hash(...parts) {
  const digest = createHash("sha256");
  for (const part of parts) digest.update(part).update("\0");
  return digest.digest("hex").slice(0, 16);
}

function log(message) {
  process.stderr.write(`[llama-server] ${message}\n`);
}

function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let tail = "";
    const keep = (chunk) => {
      tail = (tail + chunk.toString("utf8")).slice(-4_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (error) => reject(new Error(`${command} could not start (${error.message})`)));
    child.on("close", (code) => {
      if (code === 0) {
        log(`${command} ${args[0] ?? ""}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
        resolve(tail);
      } else reject(new Error(`${command} ${args.join(" ")} failed (exit ${code}):\n${tail}`));
    });
  });
}

function has(command) {
  try {
    execFileSync(command, ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The first python3 that imports numpy and yaml (gguf-py needs both). */
function findPython() {
  for (const candidate of ["python3", "/usr/bin/python3"]) {
    try {
      execFileSync(candidate, ["-c", "import numpy, yaml"], { stdio: "ignore" });
      return candidate;
    } catch {}
  }
  throw new Error(
    "the tiny model's generator needs python3 with numpy and PyYAML (apt-get install python3-numpy python3-yaml)",
  );
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** Holds `path` (created exclusively, with our pid) while `work` runs; waits for a live owner, takes a dead one's. */
async function withLock(path, work) {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let announced = false;
  for (;;) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      const owner = Number.parseInt(readFileSync(path, "utf8"), 10);
      if (!Number.isInteger(owner) || !alive(owner)) {
        rmSync(path, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`waited too long for the build that holds ${path} (pid ${owner})`);
      if (!announced) log(`waiting for the build in process ${owner}`);
      announced = true;
      await sleep(1_000);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(path, { force: true });
  }
}

/** The llama.cpp tree at the pinned commit, cloned from the npm package's bundle. */
async function ensureSource(root) {
  const source = join(root, `src-${COMMIT.slice(0, 12)}`);
  if (existsSync(join(source, ".parley-complete"))) return source;
  const packDir = join(root, "pack");
  rmSync(packDir, { recursive: true, force: true });
  mkdirSync(packDir, { recursive: true });
  await run("npm", ["pack", `${PACKAGE}@${PACKAGE_VERSION}`, "--silent", "--pack-destination", packDir], packDir);
  const tarball = readdirSync(packDir).find((name) => name.endsWith(".tgz"));
  if (tarball === undefined) throw new Error(`npm pack ${PACKAGE}@${PACKAGE_VERSION} left no tarball`);
  await run("tar", ["-xzf", tarball, "package/llama/gitRelease.bundle"], packDir);
  rmSync(source, { recursive: true, force: true });
  await run("git", ["clone", "--quiet", join(packDir, "package", "llama", "gitRelease.bundle"), source], root);
  const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: source, encoding: "utf8" }).trim();
  if (head !== COMMIT)
    throw new Error(`${PACKAGE}@${PACKAGE_VERSION}'s bundle is at ${head}, not the pinned ${COMMIT}`);
  rmSync(packDir, { recursive: true, force: true });
  closeSync(openSync(join(source, ".parley-complete"), "w"));
  return source;
}

async function ensureBinary(root, source) {
  const generator = has("ninja") ? ["-G", "Ninja"] : [];
  const key = hash(PACKAGE_VERSION, COMMIT, ...CMAKE_FLAGS, ...generator);
  const binary = join(root, `llama-server-${key}`);
  if (existsSync(binary)) return used(binary);
  const build = join(root, `build-${key}`);
  await run("cmake", ["-S", source, "-B", build, ...generator, ...CMAKE_FLAGS], root);
  await run("cmake", ["--build", build, "--target", "llama-server", "-j", "2"], root);
  const built = join(build, "bin", "llama-server");
  if (!existsSync(built)) throw new Error(`the build finished but ${built} is not there`);
  renameSync(built, `${binary}.tmp`);
  renameSync(`${binary}.tmp`, binary);
  rmSync(build, { recursive: true, force: true });
  removeOthers(root, "llama-server-", binary);
  return binary;
}

async function ensureModel(root, source) {
  const key = hash(readFileSync(GENERATOR), COMMIT);
  const model = join(root, `tiny-model-${key}.gguf`);
  if (existsSync(model) && statSync(model).size > 0) return used(model);
  const python = findPython();
  await run(python, [GENERATOR, "--llama-cpp", source, "--out", `${model}.tmp`], root);
  renameSync(`${model}.tmp`, model);
  removeOthers(root, "tiny-model-", model);
  return model;
}

/**
 * How long a build or model of other inputs stays in the cache unused: another checkout of the project (an older
 * commit's generator, a CI clone) may share the cache at the same time, and removing its model at once made each
 * side regenerate the other's on every run.
 */
const KEEP_UNUSED_MS = 24 * 60 * 60_000;

/** `path`, its modification time set to now: the cache's "last used". */
function used(path) {
  const now = new Date();
  utimesSync(path, now, now);
  return path;
}

/** Builds and models of other inputs in the cache that no run used for a day, removed once a replacement is there. */
function removeOthers(root, prefix, kept) {
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (!name.startsWith(prefix) || path === kept) continue;
    if (Date.now() - statSync(path).mtimeMs > KEEP_UNUSED_MS) rmSync(path, { force: true });
  }
}

/** The server's binary and the model, built and generated on first use. */
export async function ensureLlamaServer(root = cacheRoot()) {
  mkdirSync(root, { recursive: true });
  return withLock(join(root, "lock"), async () => {
    const source = await ensureSource(root);
    const binary = await ensureBinary(root, source);
    const model = await ensureModel(root, source);
    return { binary, model, version: `${PACKAGE}@${PACKAGE_VERSION}`, commit: COMMIT };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now();
  ensureLlamaServer().then(
    (result) => {
      log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      process.stdout.write(`${JSON.stringify(result)}\n`);
    },
    (error) => {
      log(error.message);
      process.exit(1);
    },
  );
}
