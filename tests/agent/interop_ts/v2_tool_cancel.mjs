// Drives `iac-code acp` over stdio with the official TypeScript SDK's v2 client (the newest
// draft, `@agentclientprotocol/sdk/experimental/v2`): initialize at protocol version 2, a
// session, a prompt whose bash call runs long; as soon as the call reports `in_progress` with
// `capabilities.cancel`, `tool_call/cancel` stops it, and the turn must go on to its idle.
// Usage: node v2_tool_cancel.mjs CWD PROMPT -- AGENT_CMD...  Prints one JSON summary line.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk/experimental/v2";

const separator = process.argv.indexOf("--");
const [cwd, promptText] = process.argv.slice(2, separator);
const [command, ...args] = process.argv.slice(separator + 1);
const agent = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const timer = setTimeout(() => {
  console.error("v2 interop client timed out");
  agent.kill("SIGKILL");
  process.exit(3);
}, 60_000);

let context;
let cancelAnswer;
let finished;
const idle = new Promise((resolve) => {
  finished = resolve;
});
const updates = [];
const app = client({ name: "interop-ts-v2-client" })
  .onRequest(methods.client.session.requestPermission, (ctx) => {
    const allow = ctx.params.options.find((option) => option.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onNotification(methods.client.session.update, (ctx) => {
    const { sessionId, update } = ctx.params;
    updates.push(update);
    const stoppable =
      update.sessionUpdate === "tool_call_update" &&
      update.status === "in_progress" &&
      update.capabilities?.cancel;
    if (stoppable && cancelAnswer === undefined) {
      cancelAnswer = context.request(methods.agent.toolCall.cancel, {
        sessionId,
        toolCallId: update.toolCallId,
      });
    }
    if (update.sessionUpdate === "state_update" && update.state === "idle") {
      finished(update);
    }
  });

const summary = await app.connectWith(stream, async (ctx) => {
  context = ctx;
  const init = await ctx.request(methods.agent.initialize, {
    protocolVersion: 2,
    info: { name: "interop-ts-v2-client", version: "1.0.0" },
  });
  const session = await ctx.request(methods.agent.session.new, { cwd });
  const answer = await ctx.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: promptText }],
  });
  const end = await idle;
  const cancelled = await cancelAnswer;
  const calls = updates.filter((u) => u.sessionUpdate === "tool_call_update");
  return {
    protocolVersion: init.protocolVersion,
    messageId: answer.messageId,
    cancelAnswer: cancelled,
    finalStatus: calls.at(-1)?.status,
    stopReason: end.stopReason,
    text: updates
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => u.content.text)
      .join(""),
  };
});
clearTimeout(timer);
agent.stdin.end();
console.log(JSON.stringify(summary));
process.exit(0);
