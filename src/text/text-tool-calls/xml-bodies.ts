import { parameterSchema, type ToolLookup, typeParameterValue } from "./schema-values.js";
import type { ParsedCall } from "./syntax.js";

/**
 * Formats that write arguments as tagged bare text, typed afterwards by the tool's schema:
 * Qwen3-Coder `<function=NAME><parameter=K>V</parameter></function>`, GLM
 * `NAME<arg_key>K</arg_key><arg_value>V</arg_value>`, MiniMax
 * `<invoke name="NAME"><parameter name="K">V</parameter></invoke>`. Closing tags a truncated answer
 * never wrote are not required: an element then runs to the next opening tag or the end.
 */

interface Element {
  name: string;
  contentStart: number;
  contentEnd: number;
  /** Just past the closing tag, or where the content ended when there was none. */
  end: number;
}

/**
 * The elements opened by `open` (group 1-3 give the name) in `text[from, to)`; each ends at `close`,
 * the next opening or `to`.
 */
function elements(text: string, open: RegExp, close: string, from: number, to: number): Element[] {
  const found: Element[] = [];
  const pattern = new RegExp(open.source, "g");
  pattern.lastIndex = from;
  let match = pattern.exec(text);
  while (match !== null && match.index < to) {
    const contentStart = match.index + match[0].length;
    const next = (() => {
      pattern.lastIndex = contentStart;
      const following = pattern.exec(text);
      return following !== null && following.index < to ? following : null;
    })();
    const limit = next?.index ?? to;
    const closeAt = text.indexOf(close, contentStart);
    const closed = closeAt !== -1 && closeAt + close.length <= limit;
    const name = (match[1] ?? match[2] ?? match[3] ?? "").trim();
    found.push({
      name,
      contentStart,
      contentEnd: closed ? closeAt : limit,
      end: closed ? closeAt + close.length : limit,
    });
    match = next;
  }
  return found;
}

function typedArguments(
  text: string,
  parameters: Element[],
  toolName: string,
  lookup: ToolLookup,
): Record<string, unknown> {
  const tool = lookup(toolName);
  const input: Record<string, unknown> = {};
  for (const parameter of parameters) {
    const raw = text.slice(parameter.contentStart, parameter.contentEnd);
    input[parameter.name] = typeParameterValue(raw, parameterSchema(tool, parameter.name));
  }
  return input;
}

const QWEN_FUNCTION = /<function=([^>\n]*)>/;
const QWEN_PARAMETER = /<parameter=([^>\n]*)>/;

/** Qwen3-Coder calls in `text[from, to)`; `undefined` when there is none. */
export function parseQwenCoderCalls(
  text: string,
  from: number,
  to: number,
  lookup: ToolLookup,
): ParsedCall[] | undefined {
  const functions = elements(text, QWEN_FUNCTION, "</function>", from, to);
  if (functions.length === 0 || functions.some((element) => element.name === "")) return undefined;
  return functions.map((element) => ({
    name: element.name,
    input: typedArguments(
      text,
      elements(text, QWEN_PARAMETER, "</parameter>", element.contentStart, element.contentEnd),
      element.name,
      lookup,
    ),
    end: element.end,
  }));
}

const MINIMAX_INVOKE = /<invoke\s+name=(?:"([^"]*)"|'([^']*)'|([^\s>]+))\s*>/;
const MINIMAX_PARAMETER = /<parameter\s+name=(?:"([^"]*)"|'([^']*)'|([^\s>]+))\s*>/;

/** MiniMax `<invoke>` calls in `text[from, to)`. */
export function parseMinimaxCalls(
  text: string,
  from: number,
  to: number,
  lookup: ToolLookup,
): ParsedCall[] | undefined {
  const invokes = elements(text, MINIMAX_INVOKE, "</invoke>", from, to);
  if (invokes.length === 0 || invokes.some((element) => element.name === "")) return undefined;
  return invokes.map((element) => ({
    name: element.name,
    input: typedArguments(
      text,
      elements(text, MINIMAX_PARAMETER, "</parameter>", element.contentStart, element.contentEnd),
      element.name,
      lookup,
    ),
    end: element.end,
  }));
}

const GLM_NAME = /^[^\s<>{}"']+$/;

/** One GLM call: the body of a `<tool_call>` element. */
export function parseGlmCall(body: string, lookup: ToolLookup): ParsedCall | undefined {
  const firstKey = body.indexOf("<arg_key>");
  const name = (firstKey === -1 ? body : body.slice(0, firstKey)).trim();
  if (!GLM_NAME.test(name)) return undefined;
  const tool = lookup(name);
  const input: Record<string, unknown> = {};
  if (firstKey === -1) return { name, input };
  const pairs = /<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)(?:<\/arg_value>|$)/g;
  let consumed = firstKey;
  for (const match of body.matchAll(pairs)) {
    if (body.slice(consumed, match.index).trim() !== "") return undefined;
    const key = (match[1] ?? "").trim();
    input[key] = typeParameterValue(match[2] ?? "", parameterSchema(tool, key));
    consumed = match.index + match[0].length;
  }
  // A key with no value (cut short) or stray text: not a call we can read faithfully.
  if (body.slice(consumed).trim() !== "") return undefined;
  return { name, input };
}
