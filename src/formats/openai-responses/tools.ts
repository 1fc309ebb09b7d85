import type { Fields, LossyEntry, SharesField, ToolCallPart, ToolChoice, ToolDefinition } from "../../core/index.js";
import { assertNever, fieldsFor } from "../../core/index.js";
import { keep, kept } from "./extra.js";
import type { ResponsesTool } from "./wire-types.js";

/**
 * Tools between the Responses API and the core model. A function tool is a core tool; a custom (freeform) tool
 * is a core tool taking `{"input": string}`, so that any API can call it; a namespace's functions are core tools
 * named `<namespace>__<name>`; hosted tools (`web_search`...) only a Responses provider can run, and stay aside.
 */

/** Joins a namespace and a function name into one tool name every API accepts (`[A-Za-z0-9_-]`). */
export const NAMESPACE_SEPARATOR = "__";

export interface ToolsRead {
  tools: ToolDefinition[];
  /** Hosted tools, as they came. */
  hosted: ResponsesTool[];
}

export function toolsToCore(tools: readonly ResponsesTool[]): ToolsRead {
  const out: ToolDefinition[] = [];
  const hosted: ResponsesTool[] = [];
  for (const tool of tools) {
    switch (tool.type) {
      case "function":
        out.push(functionToCore(tool));
        break;
      case "custom":
        out.push(customToCore(tool));
        break;
      case "namespace": {
        const { type: _type, name, tools: inner = [], ...outer } = tool;
        inner.forEach((fn, index) => {
          const definition = functionToCore(fn);
          definition.name = `${name}${NAMESPACE_SEPARATOR}${fn.name}`;
          keep(definition, { namespace: name, name: fn.name, namespaceTool: index === 0 ? outer : undefined });
          out.push(definition);
        });
        break;
      }
      default:
        hosted.push(tool);
    }
  }
  return { tools: out, hosted };
}

function functionToCore(tool: ResponsesTool): ToolDefinition {
  const { type: _type, name, description, parameters, ...rest } = tool;
  const definition: ToolDefinition = {
    name: name ?? "",
    inputSchema: parameters ?? { type: "object", properties: {} },
  };
  if (typeof description === "string") definition.description = description;
  return keep(definition, rest);
}

/** A freeform tool as a function of one string, its grammar (when it has one) told in the description. */
function customToCore(tool: ResponsesTool): ToolDefinition {
  const { type, name, description, format, ...rest } = tool;
  const grammar = format as { type?: string; syntax?: string; definition?: string } | undefined;
  const inputText =
    grammar?.type === "grammar" && typeof grammar.definition === "string"
      ? `The tool's input, as raw text in this ${grammar.syntax ?? ""} grammar:\n${grammar.definition}`
      : "The tool's input, as raw text.";
  const definition: ToolDefinition = {
    name: name ?? "",
    inputSchema: {
      type: "object",
      properties: { input: { type: "string", description: inputText } },
      required: ["input"],
      additionalProperties: false,
    },
  };
  if (typeof description === "string") definition.description = description;
  return keep(definition, { type, format, ...rest });
}

/** Core tools (and the hosted ones kept aside) as Responses tools; what no Responses tool can be is reported. */
export function toolsFromCore(
  tools: readonly ToolDefinition[],
  hosted: readonly ResponsesTool[],
  lossy: LossyEntry[],
): ResponsesTool[] {
  const out: ResponsesTool[] = [];
  let namespace: ResponsesTool | undefined;
  tools.forEach((tool, index) => {
    const own = kept(tool);
    // An Anthropic tool's `type` says what kind it is: a custom one is a function here, a server tool runs nowhere else.
    const serverType = tool.extra?.anthropic?.type;
    if (typeof serverType === "string" && serverType !== "function" && serverType !== "custom") {
      lossy.push({
        code: "server-tool-dropped",
        message: `the server tool '${tool.name}' (${serverType}) has no Responses equivalent`,
        path: `tools[${index}]`,
      });
      return;
    }
    const { fields, dropped } = fieldsFor(tool.extra, "responses", sharedToolField);
    const names = dropped.flatMap(({ from, key }) => (from === "anthropic" && key === "type" ? [] : [key]));
    if (names.length > 0) {
      lossy.push({
        code: "tool-fields-dropped",
        message: `no Responses equivalent for ${names.join(", ")}`,
        path: `tools[${index}]`,
      });
    }
    if (own.type === "custom") {
      namespace = undefined;
      const { type, format, ...rest } = own;
      const custom: ResponsesTool = { type: "custom", name: tool.name };
      if (tool.description !== undefined) custom.description = tool.description;
      if (format !== undefined) custom.format = format;
      out.push({ ...custom, ...rest });
      return;
    }
    const { namespace: space, name: innerName, namespaceTool, ...rest } = own;
    const fn: ResponsesTool = { type: "function", name: typeof innerName === "string" ? innerName : tool.name };
    if (tool.description !== undefined) fn.description = tool.description;
    fn.parameters = tool.inputSchema ?? { type: "object", properties: {} };
    // Responses makes a function strict unless told otherwise; a tool from another API was not written for that.
    fn.strict = typeof fields?.strict === "boolean" ? fields.strict : false;
    const { strict: _strict, ...more } = rest;
    Object.assign(fn, more);
    if (typeof space !== "string") {
      namespace = undefined;
      out.push(fn);
      return;
    }
    if (namespace?.name !== space) {
      namespace = { type: "namespace", name: space, ...(namespaceTool as Fields | undefined), tools: [] };
      out.push(namespace);
    }
    namespace.tools!.push(fn);
  });
  return [...out, ...hosted];
}

/** A tool's `strict` (the input must match the schema) means the same in every API that has it. */
const sharedToolField: SharesField = (key, value) => key === "strict" && typeof value === "boolean";

export function toolChoiceToCore(choice: unknown): ToolChoice | undefined {
  if (choice === "auto") return { type: "auto" };
  if (choice === "required") return { type: "any" };
  if (choice === "none") return { type: "none" };
  const object = choice as { type?: unknown; name?: unknown; namespace?: unknown } | null;
  if ((object?.type === "function" || object?.type === "custom") && typeof object.name === "string") {
    const name =
      typeof object.namespace === "string" ? `${object.namespace}${NAMESPACE_SEPARATOR}${object.name}` : object.name;
    return { type: "tool", name };
  }
  return undefined;
}

export function toolChoiceFromCore(choice: ToolChoice, tools: readonly ToolDefinition[]): unknown {
  switch (choice.type) {
    case "auto":
      return "auto";
    case "any":
      return "required";
    case "none":
      return "none";
    case "tool": {
      const tool = tools.find((candidate) => candidate.name === choice.name);
      const own = kept(tool);
      if (own.type === "custom") return { type: "custom", name: choice.name };
      if (typeof own.namespace === "string" && typeof own.name === "string")
        return { type: "function", name: own.name, namespace: own.namespace };
      return { type: "function", name: choice.name };
    }
    default:
      return assertNever(choice, "tool choice");
  }
}

/** How a core tool call is written for a Responses client or provider. */
export type CallForm =
  | { kind: "function"; name: string; namespace?: string }
  | { kind: "custom"; name: string; input: string };

/**
 * A call is a custom tool's when the tool it names is (or the call came as one); a namespaced function's when its
 * tool sits in a namespace. The tools are the request's, when known.
 */
export function callForm(part: ToolCallPart, tools: readonly ToolDefinition[] | undefined): CallForm {
  const own = kept(part);
  const tool = tools?.find((candidate) => candidate.name === part.name);
  const toolOwn = kept(tool);
  if (own.type === "custom_tool_call" || toolOwn.type === "custom") {
    const input = (part.input as { input?: unknown } | null)?.input;
    return {
      kind: "custom",
      name: part.name,
      input:
        typeof input === "string"
          ? input
          : (part.rawInput ?? JSON.stringify(part.input === undefined ? {} : part.input)),
    };
  }
  const space = typeof own.namespace === "string" ? own.namespace : toolOwn.namespace;
  if (typeof space === "string" && part.name.startsWith(`${space}${NAMESPACE_SEPARATOR}`)) {
    return { kind: "function", name: part.name.slice(space.length + NAMESPACE_SEPARATOR.length), namespace: space };
  }
  return { kind: "function", name: part.name };
}
