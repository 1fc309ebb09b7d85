import type { ViewedMessage } from "../formats/adapter.js";
import { blockKey, blockOf } from "./part-view.js";
import type { Block, BlockKind, MessageHead, Row } from "./view-types.js";

/** Past this many cells the middle of two sides is matched greedily instead of by longest common subsequence. */
const MAX_TABLE_CELLS = 4_000_000;

/** Two sides' messages, as read for the page, with the block objects notes are attached to. */
export interface SideBlocks {
  heads: MessageHead[];
  /** Per message, its blocks. */
  blocks: Block[][];
}

export function sideBlocks(messages: readonly ViewedMessage[]): SideBlocks {
  return {
    heads: messages.map((message) => ({ role: message.role, path: message.path, notes: [], remarks: [] })),
    blocks: messages.map((message) => message.parts.map(blockOf)),
  };
}

interface Flat {
  message: number;
  key: number;
  kind: BlockKind;
  block: Block;
}

/**
 * Lines up two sides block by block, so that what moved, merged, changed or vanished shows: blocks the same on
 * both sides are matched in order (longest common subsequence of their content), blocks of a compatible kind left
 * between two matches are paired as changed, a block matched out of order is moved, the rest is on one side only.
 * Message headings go where a message's first block is; a message whose blocks went to several (or came from
 * several) gets a remark.
 */
export function alignSides(
  left: SideBlocks,
  right: SideBlocks,
  leftMessages: readonly ViewedMessage[],
  rightMessages: readonly ViewedMessage[],
): Row[] {
  const keys = new Map<string, number>();
  const flatten = (side: SideBlocks, messages: readonly ViewedMessage[]): Flat[] =>
    messages.flatMap((message, index) =>
      message.parts.map((viewed, part) => {
        const text = blockKey(viewed.part);
        let key = keys.get(text);
        if (key === undefined) {
          key = keys.size;
          keys.set(text, key);
        }
        const block = side.blocks[index]![part]!;
        return { message: index, key, kind: block.kind, block };
      }),
    );
  const a = flatten(left, leftMessages);
  const b = flatten(right, rightMessages);
  const pairs = matchInOrder(a, b);
  pairGaps(a, b, pairs);
  const moved = movedBlocks(a, b, pairs);
  remarkMerges(a, b, pairs, left.heads, right.heads);
  return buildRows(a, b, pairs, moved, left.heads, right.heads, leftMessages, rightMessages);
}

/** Index pairs, increasing on both sides: equal keys matched in order. */
function matchInOrder(a: Flat[], b: Flat[]): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  let start = 0;
  while (start < a.length && start < b.length && a[start]!.key === b[start]!.key) {
    pairs.push([start, start]);
    start++;
  }
  let endA = a.length;
  let endB = b.length;
  const tail: Array<[number, number]> = [];
  while (endA > start && endB > start && a[endA - 1]!.key === b[endB - 1]!.key) {
    endA--;
    endB--;
    tail.push([endA, endB]);
  }
  const n = endA - start;
  const m = endB - start;
  if (n > 0 && m > 0) {
    if (n * m <= MAX_TABLE_CELLS) pairs.push(...longestCommon(a, b, start, endA, endB));
    else pairs.push(...greedyCommon(a, b, start, endA, endB));
  }
  return [...pairs, ...tail.reverse()];
}

function longestCommon(a: Flat[], b: Flat[], start: number, endA: number, endB: number): Array<[number, number]> {
  const n = endA - start;
  const m = endB - start;
  const width = m + 1;
  const table = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * width + j] =
        a[start + i]!.key === b[start + j]!.key
          ? table[(i + 1) * width + j + 1]! + 1
          : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!);
    }
  }
  const pairs: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[start + i]!.key === b[start + j]!.key) {
      pairs.push([start + i, start + j]);
      i++;
      j++;
    } else if (table[(i + 1) * width + j]! >= table[i * width + j + 1]!) i++;
    else j++;
  }
  return pairs;
}

/** For sides too large for the table: each block matched to the next equal one on the other side. */
function greedyCommon(a: Flat[], b: Flat[], start: number, endA: number, endB: number): Array<[number, number]> {
  const positions = new Map<number, number[]>();
  for (let j = endB - 1; j >= start; j--) {
    const list = positions.get(b[j]!.key);
    if (list === undefined) positions.set(b[j]!.key, [j]);
    else list.push(j);
  }
  const pairs: Array<[number, number]> = [];
  let after = start;
  for (let i = start; i < endA; i++) {
    const list = positions.get(a[i]!.key);
    while (list !== undefined && list.length > 0 && list.at(-1)! < after) list.pop();
    const j = list?.pop();
    if (j === undefined) continue;
    pairs.push([i, j]);
    after = j + 1;
  }
  return pairs;
}

const FAMILY: Record<BlockKind, string> = {
  text: "prose",
  thinking: "prose",
  redacted_thinking: "prose",
  tool_call: "call",
  tool_result: "result",
  image: "media",
  document: "media",
  opaque: "other",
};

function compatible(x: Flat, y: Flat): boolean {
  const [p, q] = [FAMILY[x.kind], FAMILY[y.kind]];
  // A tool result written as text (repair of an orphan) is still that result.
  return p === q || (p === "result" && q === "prose") || (p === "prose" && q === "result");
}

/** Between two matches, blocks of a compatible kind are paired in order as changed; pairs stay sorted. */
function pairGaps(a: Flat[], b: Flat[], pairs: Array<[number, number]>): void {
  const anchors: Array<[number, number]> = [[-1, -1], ...pairs, [a.length, b.length]];
  const added: Array<[number, number]> = [];
  for (let index = 1; index < anchors.length; index++) {
    const [fromA, fromB] = anchors[index - 1]!;
    const [toA, toB] = anchors[index]!;
    let j = fromB + 1;
    for (let i = fromA + 1; i < toA && j < toB; i++) {
      let k = j;
      while (k < toB && !compatible(a[i]!, b[k]!)) k++;
      if (k === toB) continue;
      added.push([i, k]);
      j = k + 1;
    }
  }
  pairs.push(...added);
  pairs.sort((x, y) => x[0] - y[0]);
}

/** Blocks on one side only whose very content is on the other side only too: moved there. */
function movedBlocks(a: Flat[], b: Flat[], pairs: Array<[number, number]>): Map<number, number> {
  const pairedA = new Set(pairs.map((pair) => pair[0]));
  const pairedB = new Set(pairs.map((pair) => pair[1]));
  const waiting = new Map<number, number[]>();
  b.forEach((flat, j) => {
    if (pairedB.has(j)) return;
    const list = waiting.get(flat.key);
    if (list === undefined) waiting.set(flat.key, [j]);
    else list.push(j);
  });
  const moved = new Map<number, number>();
  a.forEach((flat, i) => {
    if (pairedA.has(i)) return;
    const j = waiting.get(flat.key)?.shift();
    if (j !== undefined) moved.set(i, j);
  });
  return moved;
}

function remarkMerges(
  a: Flat[],
  b: Flat[],
  pairs: Array<[number, number]>,
  leftHeads: MessageHead[],
  rightHeads: MessageHead[],
): void {
  const into = new Map<number, Set<number>>();
  const from = new Map<number, Set<number>>();
  for (const [i, j] of pairs) {
    const x = a[i]!.message;
    const y = b[j]!.message;
    (from.get(y) ?? from.set(y, new Set()).get(y)!).add(x);
    (into.get(x) ?? into.set(x, new Set()).get(x)!).add(y);
  }
  for (const [y, sources] of from) {
    if (sources.size > 1) {
      rightHeads[y]!.remarks.push(`merged from ${[...sources].map((x) => leftHeads[x]!.path).join(", ")}`);
    }
  }
  for (const [x, targets] of into) {
    if (targets.size > 1) {
      leftHeads[x]!.remarks.push(`split into ${[...targets].map((y) => rightHeads[y]!.path).join(", ")}`);
    }
  }
}

function buildRows(
  a: Flat[],
  b: Flat[],
  pairs: Array<[number, number]>,
  moved: Map<number, number>,
  leftHeads: MessageHead[],
  rightHeads: MessageHead[],
  leftMessages: readonly ViewedMessage[],
  rightMessages: readonly ViewedMessage[],
): Row[] {
  const rows: Row[] = [];
  const movedTo = new Map([...moved].map(([i, j]) => [j, i]));
  const shownLeft = new Set<number>();
  const shownRight = new Set<number>();
  const headOf = (side: "left" | "right", message: number): MessageHead | undefined => {
    const shown = side === "left" ? shownLeft : shownRight;
    if (shown.has(message)) return undefined;
    shown.add(message);
    return (side === "left" ? leftHeads : rightHeads)[message];
  };
  const leftRow = (i: number): Row => {
    const flat = a[i]!;
    const j = moved.get(i);
    const row: Row =
      j === undefined
        ? { change: "removed", left: flat.block }
        : { change: "moved", left: flat.block, detail: `to ${b[j]!.block.path}` };
    const head = headOf("left", flat.message);
    if (head) row.leftMessage = head;
    return row;
  };
  const rightRow = (j: number): Row => {
    const flat = b[j]!;
    const i = movedTo.get(j);
    const row: Row =
      i === undefined
        ? { change: "added", right: flat.block }
        : { change: "moved", right: flat.block, detail: `from ${a[i]!.block.path}` };
    const head = headOf("right", flat.message);
    if (head) row.rightMessage = head;
    return row;
  };
  let i = 0;
  let j = 0;
  for (const [pairA, pairB] of [...pairs, [a.length, b.length] as [number, number]]) {
    while (i < pairA) rows.push(leftRow(i++));
    while (j < pairB) rows.push(rightRow(j++));
    if (pairA === a.length && pairB === b.length) break;
    const x = a[pairA]!;
    const y = b[pairB]!;
    const row: Row = { change: "same", left: x.block, right: y.block };
    if (x.key !== y.key) {
      row.change = "changed";
      row.detail = x.kind === y.kind ? `${x.kind.replace("_", " ")} differs` : `${kindName(x)} became ${kindName(y)}`;
    } else if (x.kind !== y.kind) {
      row.change = "changed";
      row.detail = `${kindName(x)} became ${kindName(y)}`;
    } else if (x.block.title !== y.block.title) {
      // The same content, something else gone or added: a signature, a tool result's error flag.
      row.change = "changed";
      row.detail = `${x.block.title} became ${y.block.title}`;
    }
    const leftHead = headOf("left", x.message);
    const rightHead = headOf("right", y.message);
    if (leftHead) row.leftMessage = leftHead;
    if (rightHead) row.rightMessage = rightHead;
    rows.push(row);
    i = pairA + 1;
    j = pairB + 1;
  }
  // Messages with no blocks at all still have their heading.
  leftMessages.forEach((message, index) => {
    if (message.parts.length === 0) rows.push({ change: "removed", leftMessage: leftHeads[index]! });
  });
  rightMessages.forEach((message, index) => {
    if (message.parts.length === 0) rows.push({ change: "added", rightMessage: rightHeads[index]! });
  });
  return rows;
}

function kindName(flat: Flat): string {
  return flat.kind.replace("_", " ");
}
