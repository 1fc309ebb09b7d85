import { runAnswerContract } from "../answers/contract.suite.js";
import { runConversationContract } from "../conversations/contract.suite.js";
import { memoryStore } from "../open-store.js";
import { runTraceContract } from "../traces/contract.suite.js";

runConversationContract("memory", () => memoryStore());
runAnswerContract("memory", () => memoryStore());
runTraceContract("memory", (options) => memoryStore(options));
