import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import type { Message } from "../../core/index.js";
import { upgradeLegacyExtras } from "../conversations/legacy-extra.js";
import { openStore } from "../open-store.js";

const folder = mkdtempSync(join(tmpdir(), "parley-legacy-extra-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("extras stored before they were keyed by format", () => {
  test("a SQLite row written with flat extras loads with them as Anthropic's", async () => {
    const path = join(folder, "legacy.db");
    const store = await openStore(`sqlite:${path}`);
    const { id } = await store.conversations.create();
    await store.conversations.append(id, [
      {
        role: "user",
        parts: [{ type: "text", text: "hi", extra: { anthropic: { cache_control: { type: "ephemeral" } } } }],
      },
    ]);
    await store.close();
    // What a store of the earlier version holds for the same message.
    const db = new Database(path);
    db.prepare("UPDATE parts SET part = ?").run(
      JSON.stringify({ type: "text", text: "hi", extra: { cache_control: { type: "ephemeral" } } }),
    );
    db.prepare("UPDATE messages SET extra = ?").run(JSON.stringify({ role: "user", parts: [], extra: { id: "m1" } }));
    db.close();
    const reopened = await openStore(`sqlite:${path}`);
    const [loaded] = (await reopened.conversations.load(id)) ?? [];
    await reopened.close();
    expect(loaded?.message).toEqual({
      role: "user",
      parts: [{ type: "text", text: "hi", extra: { anthropic: { cache_control: { type: "ephemeral" } } } }],
      extra: { anthropic: { id: "m1" } },
    });
  });

  test("keyed extras, tool result content and opaque blocks are left as they are", () => {
    const message: Message = {
      role: "user",
      parts: [
        {
          type: "tool_result",
          toolCallId: "t",
          content: [{ type: "text", text: "r", extra: { citations: [] } as never }],
        },
        { type: "opaque", format: "anthropic", block: { type: "x", extra: 1 } },
        { type: "text", text: "k", extra: { openai: { name: "n" } } },
      ],
    };
    const text = message.parts[2] as { extra?: unknown };
    const keyed = text.extra;
    upgradeLegacyExtras(message);
    expect(message.parts[0]).toMatchObject({ content: [{ extra: { anthropic: { citations: [] } } }] });
    expect(message.parts[1]).toEqual({ type: "opaque", format: "anthropic", block: { type: "x", extra: 1 } });
    expect(text.extra).toBe(keyed);
  });
});
