import type { Block, MessageHead, Note, Pairing, Row, Side } from "../view-types.js";
import { append, button, bytes, h } from "./dom.js";

/** A run of this many unchanged rows or more is folded, so that what changed is what the eye meets. */
const FOLD_AT = 6;
/** Rows kept visible at each end of a folded run. */
const FOLD_EDGE = 1;
/** Text longer than this starts folded. */
const LONG_TEXT = 800;

const CHANGE_LABEL: Record<Row["change"], string> = {
  same: "",
  changed: "changed",
  moved: "moved",
  removed: "only here",
  added: "only here",
};

/** Two sides block by block, unchanged runs folded, each side's title with a raw-body button beside it. */
export function pairingView(pairing: Pairing, titles: [string, string], raw?: [() => void, () => void]): HTMLElement {
  const grid = h("div", { class: "pairing" });
  append(
    grid,
    sideHead(titles[0], pairing.left, raw?.[0]),
    h("div", { class: "gutter" }),
    sideHead(titles[1], pairing.right, raw?.[1]),
  );
  const rows = pairing.rows;
  for (let index = 0; index < rows.length; ) {
    let end = index;
    while (end < rows.length && rows[end]!.change === "same" && !hasNotes(rows[end]!)) end++;
    if (end - index >= FOLD_AT) {
      for (let row = index; row < index + FOLD_EDGE; row++) grid.append(...rowCells(rows[row]!));
      const hidden = rows.slice(index + FOLD_EDGE, end - FOLD_EDGE);
      const fold = h("div", { class: "fold" });
      const open = button(`${hidden.length} unchanged blocks`, () => {
        fold.replaceWith(...hidden.flatMap(rowCells));
      });
      append(fold, open);
      grid.append(fold);
      for (let row = end - FOLD_EDGE; row < end; row++) grid.append(...rowCells(rows[row]!));
      index = end;
    } else {
      grid.append(...rowCells(rows[index]!));
      index++;
    }
  }
  if (rows.length === 0) grid.append(h("p", { class: "empty wide" }, "No messages."));
  return grid;
}

function hasNotes(row: Row): boolean {
  return Boolean(
    row.left?.notes.length ||
      row.right?.notes.length ||
      row.leftMessage?.notes.length ||
      row.rightMessage?.notes.length ||
      row.leftMessage?.remarks.length ||
      row.rightMessage?.remarks.length,
  );
}

function sideHead(title: string, side: Side, raw: (() => void) | undefined): HTMLElement {
  const facts = [side.format, side.model, bytes(side.bytes), side.tools ? `${side.tools.length} tools` : undefined];
  return h(
    "div",
    { class: "side-head" },
    h("h3", {}, title),
    h("span", { class: "facts" }, facts.filter(Boolean).join(" · ")),
    raw ? button("raw", raw, { class: "raw-button", "aria-label": `raw ${title}` }) : false,
    side.unread ? h("p", { class: "unread" }, "Not readable as messages: see the raw body.") : false,
  );
}

function rowCells(row: Row): HTMLElement[] {
  const cell = (block: Block | undefined, head: MessageHead | undefined, side: string) => {
    const element = h("div", { class: `cell ${side} ${block ? "" : "none"}` });
    if (head) append(element, messageHead(head));
    if (block) append(element, blockView(block, block.sameText ? row.left?.text : undefined));
    return element;
  };
  const marker = h("div", { class: `gutter change-${row.change}`, title: row.detail ?? CHANGE_LABEL[row.change] });
  if (row.change !== "same") append(marker, h("span", {}, row.detail ?? CHANGE_LABEL[row.change]));
  return [
    cell(row.left, row.leftMessage, `left change-${row.change}`),
    marker,
    cell(row.right, row.rightMessage, `right change-${row.change}`),
  ];
}

function messageHead(head: MessageHead): HTMLElement {
  return h(
    "div",
    { class: "message-head", "data-path": head.path },
    h("span", { class: `role role-${head.role}` }, head.role),
    h("code", {}, head.path || "answer"),
    ...head.remarks.map((remark) => h("span", { class: "remark" }, remark)),
    ...head.notes.map(noteView),
  );
}

/** A block; `shared` is the text of a right-hand block whose text was sent once, with its left-hand twin. */
export function blockView(block: Block, shared?: string): HTMLElement {
  const text = shared ?? block.text;
  const element = h(
    "div",
    { class: `block kind-${block.kind}`, "data-path": block.path },
    h("div", { class: "block-title" }, h("span", {}, block.title), h("code", {}, block.path)),
    ...block.notes.map(noteView),
  );
  if (block.image) {
    append(element, h("img", { src: `data:${block.image.mediaType};base64,${block.image.data}`, alt: block.title }));
  }
  if (text !== "") {
    // A long text starts cut: laying out megabytes of wrapped text, even hidden, is what makes a page slow.
    const long = text.length > LONG_TEXT;
    const shown = h("pre", { class: "text" }, long ? `${text.slice(0, LONG_TEXT)}…` : text);
    append(element, shown);
    if (long) {
      const more = `all ${text.length.toLocaleString("en-US")} characters`;
      let whole = false;
      const toggle = button(more, () => {
        whole = !whole;
        shown.textContent = whole ? text : `${text.slice(0, LONG_TEXT)}…`;
        toggle.textContent = whole ? "less" : more;
      });
      toggle.classList.add("text-toggle");
      append(element, toggle);
    }
  }
  return element;
}

export function noteView(note: Note): HTMLElement {
  return h(
    "div",
    { class: `note ${note.kind}`, "data-code": note.code, ...(note.path ? { "data-path": note.path } : {}) },
    h("span", { class: "badge" }, note.kind === "repair" ? "repair" : "lost"),
    h("strong", {}, note.code),
    " ",
    note.message,
    note.path ? h("code", {}, note.path) : false,
  );
}
