/**
 * Elements built from data, never from markup: every string a trace holds (client-supplied text, model names,
 * ids) reaches the document as a text node or an attribute value, so nothing in it can become an element or a
 * script.
 */
type Child = Node | string | number | false | null | undefined;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? "" : value);
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === false || child === null || child === undefined) continue;
    parent.appendChild(
      typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child,
    );
  }
}

export function clear(element: Element): void {
  element.replaceChildren();
}

/** A button that runs `action` on click. */
export function button(label: string, action: () => void, attributes: Record<string, string> = {}): HTMLButtonElement {
  const element = h("button", { type: "button", ...attributes }, label);
  element.addEventListener("click", action);
  return element;
}

export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return h("a", { href }, ...children);
}

export function time(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (value: number, width = 2) => String(value).padStart(width, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

export function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 * 1024) return `${(count / 1024).toFixed(1)} KB`;
  return `${(count / 1024 / 1024).toFixed(2)} MB`;
}

export function ms(value: number | undefined): string {
  if (value === undefined) return "-";
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}
