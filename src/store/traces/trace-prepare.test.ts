import { describe, expect, test } from "vitest";
import { traceInstant } from "./trace-prepare.js";

describe("a trace's stored instant", () => {
  test("is the toISOString form, whatever form createdAt came in; an unparseable one counts as now", () => {
    expect(traceInstant("2026-01-01T00:00:00.000Z")).toBe("2026-01-01T00:00:00.000Z");
    expect(traceInstant("2026-01-01T01:00:00.000+01:00")).toBe("2026-01-01T00:00:00.000Z");
    expect(traceInstant("2026-01-01T00:00:00Z")).toBe("2026-01-01T00:00:00.000Z");
    const now = new Date("2026-02-03T04:05:06.789Z");
    expect(traceInstant("not a date", now)).toBe("2026-02-03T04:05:06.789Z");
    // Shaped like the form, but no instant: now, as any unparseable text.
    expect(traceInstant("2026-13-45T99:99:99.999Z", now)).toBe("2026-02-03T04:05:06.789Z");
  });
});
