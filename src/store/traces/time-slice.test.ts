import { describe, expect, test } from "vitest";
import { TimeSlice } from "./time-slice.js";

describe("time slices of a writer on the event loop", () => {
  test("quick items go on without yielding; once the slice has gone by, it yields once and starts another", async () => {
    const slice = new TimeSlice(20);
    let turns = 0;
    let spinning = true;
    const spin = () => {
      if (!spinning) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    for (let item = 0; item < 1_000; item++) await slice.yieldIfDue();
    // A thousand awaits of a resolved promise: microtasks only, no turn of the loop.
    expect(turns).toBe(0);
    const busyUntil = performance.now() + 25;
    while (performance.now() < busyUntil);
    await slice.yieldIfDue();
    expect(turns).toBe(1);
    await slice.yieldIfDue();
    expect(turns).toBe(1);
    spinning = false;
  });
});
