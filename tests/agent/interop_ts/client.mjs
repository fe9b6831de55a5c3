// Drives a remote ACP agent with the official TypeScript SDK client, over Streamable HTTP or
// WebSocket: initialize, session/new, then a prompt whose tool call asks for permission.
// Usage: node client.mjs http|ws URL CWD PROMPT. Prints one JSON summary line on stdout.
import { client, methods } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";

const [mode, url, cwd, promptText] = process.argv.slice(2);
const stream =
  mode === "ws"
    ? createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket })
    : createHttpStream(url);

const updates = [];
const permissionRequests = [];
const app = client({ name: "interop-ts-client" })
  .onRequest(methods.client.session.requestPermission, (ctx) => {
    permissionRequests.push(ctx.params.toolCall?.title ?? "");
    const allow = ctx.params.options.find((option) => option.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onNotification(methods.client.session.update, (ctx) => {
    updates.push(ctx.params.update.sessionUpdate);
  });

const timer = setTimeout(() => {
  console.error("interop client timed out");
  process.exit(3);
}, 30_000);

const summary = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: {},
  });
  const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const second = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const result = await ctx.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: promptText }],
  });
  const echoed = await ctx.request(methods.agent.session.prompt, {
    sessionId: second.sessionId,
    prompt: [{ type: "text", text: "second session" }],
  });
  return {
    protocolVersion: init.protocolVersion,
    agent: init.agentInfo?.name,
    stopReason: result.stopReason,
    secondStopReason: echoed.stopReason,
    distinctSessions: session.sessionId !== second.sessionId,
    permissionRequests: permissionRequests.length,
    updates,
  };
});
clearTimeout(timer);
console.log(JSON.stringify(summary));
process.exit(0);
