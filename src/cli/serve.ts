import { parseArgs } from "node:util";
import { FORMATS, orList, UPSTREAM_TYPES } from "../formats/registry.js";
import { ConfigError, loadConfig } from "../gateway/config/load.js";
import { type RunningGateway, startGateway } from "../gateway/server.js";
import { boundHeapGrowth } from "./heap-growth.js";
import type { CommandIo } from "./io.js";
import { stopWhenOrphaned } from "./parent-watch.js";

const help = `Usage: parley serve [options]

Runs the gateway in front of the configured upstreams, for clients of ${orList(FORMATS.map((format) => format.label))}.

Options (each also read from the environment variable shown; flags win, then environment, then the file):
  --host H                 address to listen on (PARLEY_HOST, default 127.0.0.1)
  --port P                 port (PARLEY_PORT, default 8787; 0 picks a free one)
  --config FILE            YAML or JSON config: providers, routes, limits (PARLEY_CONFIG)
  --upstream URL           the default provider's base URL (PARLEY_UPSTREAM_URL, default http://127.0.0.1:11434/v1)
  --upstream-key KEY       the default provider's API key (PARLEY_UPSTREAM_KEY)
  --upstream-type TYPE     ${orList(UPSTREAM_TYPES)} (PARLEY_UPSTREAM_TYPE, default openai)
  --model ID               where model names the upstream does not serve go (PARLEY_MODEL; default: the
                           upstream's one model when it serves one, found through its GET /models)
  --preset NAME            the upstream's quirks and published limits (PARLEY_PRESET; default guessed from the URL):
                           generic, vllm, sglang, llamacpp, ollama, lmstudio, nvidia-nim, deepseek, kimi, glm,
                           minimax, openrouter, openai
  --reasoning MODE         how thinking from elsewhere is sent to the upstream: think-tags, reasoning_content,
                           reasoning, reasoning_details or drop (PARLEY_REASONING, default the preset's mode)
  --store URL              sqlite:PATH, postgres://..., memory: (PARLEY_STORE, default sqlite:./.parley/parley.db)
  --api-key KEY            a key clients must send; repeatable (PARLEY_API_KEYS, comma-separated)
  --no-inspector           do not serve the trace inspector at /inspect (inspector.enabled: false in the file)
  -h, --help               this text

When ready it prints: parley listening on http://H:P
The inspector, http://H:P/inspect, shows the recorded exchanges (the four bodies of each side by side, what
repair changed and what could not be carried) and stored conversations; it asks for a key when keys are set.
then one line per provider: its URL and preset, the models it serves (asked with GET /models) and their limits,
or "unreachable: <cause>" (the gateway runs all the same, and asks again before the next request).
Logs are JSON lines on stderr. SIGTERM or SIGINT: stop accepting, let open streams finish, close the store, exit 0.
Web pages of other origins are refused, and so are Host names the gateway does not know (PARLEY_ALLOWED_HOSTS,
PARLEY_ALLOWED_ORIGINS, comma-separated, or allowedHosts and allowedOrigins in the file); see docs/security.md.
See docs/configuration.md for the config file, docs/clients.md for Claude Code on each kind of server.
`;

/**
 * `parley serve`. Resolves to -1 once listening (the process stays up until a signal), or to an exit code
 * when it cannot start: a configuration error names the setting and the gateway never listens.
 */
export async function runServe(argv: string[], io: CommandIo): Promise<number> {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (error) {
    io.stderr(`parley serve: ${(error as Error).message}\n\n${help}`);
    return 2;
  }
  if (values.help) {
    io.stdout(help);
    return 0;
  }
  let gateway: RunningGateway;
  try {
    const config = loadConfig(
      {
        ...optional("host", values.host),
        ...optional("port", values.port),
        ...optional("config", values.config),
        ...optional("upstream", values.upstream),
        ...optional("upstreamKey", values["upstream-key"]),
        ...optional("upstreamType", values["upstream-type"]),
        ...optional("reasoning", values.reasoning),
        ...optional("model", values.model),
        ...optional("preset", values.preset),
        ...optional("store", values.store),
        ...(values["api-key"] === undefined ? {} : { apiKeys: values["api-key"] }),
        ...(values["no-inspector"] ? { inspector: false } : {}),
      },
      process.env,
    );
    boundHeapGrowth();
    gateway = await startGateway(config);
  } catch (error) {
    const prefix = error instanceof ConfigError ? "configuration error: " : "";
    io.stderr(`parley serve: ${prefix}${(error as Error).message}\n`);
    return 1;
  }
  io.stdout(`parley listening on ${gateway.url}\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    gateway.close().then(
      () => process.exit(0),
      (error: unknown) => {
        io.stderr(`parley serve: shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  stopWhenOrphaned(stop);
  await Promise.race([gateway.discovery, delay(DISCOVERY_WAIT_MS)]);
  if (!stopping) for (const line of gateway.describeProviders()) io.stdout(`${line}\n`);
  return -1;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: false,
    options: {
      host: { type: "string" },
      port: { type: "string" },
      config: { type: "string" },
      upstream: { type: "string" },
      "upstream-key": { type: "string" },
      "upstream-type": { type: "string" },
      reasoning: { type: "string" },
      model: { type: "string" },
      preset: { type: "string" },
      store: { type: "string" },
      "api-key": { type: "string", multiple: true },
      "no-inspector": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** The provider lines wait this long for the providers' model lists; a provider still silent says so. */
const DISCOVERY_WAIT_MS = 6_000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}
