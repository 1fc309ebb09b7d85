import { describe, expect, test } from "vitest";
import { Cancellation } from "./cancellation.js";

describe("Cancellation", () => {
  test("tells each listener once, with the first reason; a removed listener hears nothing", () => {
    const cancel = new Cancellation();
    const heard: string[] = [];
    cancel.onAbort((reason) => heard.push(`a:${reason.message}`));
    const removeB = cancel.onAbort((reason) => heard.push(`b:${reason.message}`));
    removeB();
    expect(cancel.aborted).toBe(false);
    cancel.abort(new Error("client left"));
    cancel.abort(new Error("again"));
    expect(heard).toEqual(["a:client left"]);
    expect(cancel.aborted).toBe(true);
    expect(cancel.reason?.message).toBe("client left");
  });

  test("a listener added after the cancellation is not called", () => {
    const cancel = new Cancellation();
    cancel.abort(new Error("gone"));
    let called = false;
    cancel.onAbort(() => {
      called = true;
    })();
    expect(called).toBe(false);
  });
});
