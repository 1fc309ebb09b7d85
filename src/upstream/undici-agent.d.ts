// The one undici file the upstream client loads directly (see client.ts); its type is the package's own Agent.
declare module "undici/lib/dispatcher/agent.js" {
  import type { Agent } from "undici";

  const AgentClass: typeof Agent;
  export default AgentClass;
}
