import { runStoreContract } from "../contract.suite.js";
import { MemoryStore } from "./memory-store.js";

runStoreContract("memory", async (options) => new MemoryStore(options));
