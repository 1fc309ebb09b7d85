#!/usr/bin/env node
import { type CommandIo, describeError } from "./io.js";

const usage = `Usage: parley <command> [options]

Commands:
  serve       run the gateway (Anthropic Messages and OpenAI Chat Completions in front of any upstream)
  convert     convert a request, response or SSE stream between the Anthropic, OpenAI Chat and Responses formats
  repair      make a history acceptable to a target API, reporting every change
  normalize   turn a mixed-shape history into Anthropic messages
  trace       list and show recorded gateway exchanges

Run 'parley <command> --help' for a command's options.
`;

type Command = (argv: string[], io: CommandIo) => Promise<number>;

/** Commands load lazily so that `parley serve` starts without parsing the others. */
const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import("./serve.js")).runServe,
  convert: async () => (await import("./convert.js")).runConvert,
  repair: async () => (await import("./repair.js")).runRepair,
  normalize: async () => (await import("./normalize.js")).runNormalize,
  trace: async () => (await import("./trace.js")).runTrace,
};

async function main(argv: string[]): Promise<number> {
  const io: CommandIo = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  };
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(usage);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version") {
    io.stdout("parley 0.1.0\n");
    return 0;
  }
  const load = commands[name];
  if (!load) {
    io.stderr(`parley: unknown command '${name}'\n\n${usage}`);
    return 2;
  }
  const command = await load();
  return command(rest, io);
}

// A reader that stops early (`parley convert ... | head`) closes the pipe: that ends the output, not a crash.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    // serve keeps the process alive itself; every other command ends here.
    if (code !== -1) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`parley: ${describeError(error)}\n`);
    process.exitCode = 1;
  },
);
