/**
 * `npx parley serve` runs the gateway under `npm exec` and a shell; a SIGTERM to npx ends those two but never
 * reaches the gateway, which would be left serving with no parent. Under npm (which sets `npm_lifecycle_event`), a
 * gateway whose parent has gone stops as on SIGTERM. Started any other way (`nohup parley serve &`), it keeps
 * running when its parent exits, as a server should.
 */
export function stopWhenOrphaned(stop: () => void, env: NodeJS.ProcessEnv = process.env): void {
  if (env.npm_lifecycle_event === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop();
  }, PARENT_CHECK_MS);
  timer.unref();
}

/** How often the parent is checked; a read of the parent pid costs well under a microsecond. */
const PARENT_CHECK_MS = 500;
