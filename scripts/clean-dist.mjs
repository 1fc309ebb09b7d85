// A build starts from an empty dist/: a file whose source is gone (a renamed module, a test-support file) must not
// linger there and ship.
import { rmSync } from "node:fs";

rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
