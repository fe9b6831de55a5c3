// The official TypeScript SDK's remote server (AcpServer on node:http, WebSocket through `ws`)
// hosting a tiny agent, so our client-side expectations can be checked against it.
// Prints "listening http://127.0.0.1:PORT/acp" on stdout; stops on SIGTERM.
import http from "node:http";
import { agent, methods } from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";

let sessions = 0;
const createAgent = () =>
  agent({ name: "interop-ts-agent" })
    .onRequest(methods.agent.initialize, (ctx) => ({
      protocolVersion: ctx.params.protocolVersion,
      agentCapabilities: {},
      agentInfo: { name: "interop-ts-agent", version: "0.0.0" },
      authMethods: [],
    }))
    .onRequest(methods.agent.session.new, () => ({ sessionId: `ts-session-${++sessions}` }))
    .onRequest(methods.agent.session.prompt, async (ctx) => {
      const sessionId = ctx.params.sessionId;
      const answer = await ctx.client.request(methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: "call-1", title: "write a file", kind: "edit" },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      });
      const chosen = answer.outcome.outcome === "selected" ? answer.outcome.optionId : "none";
      await ctx.client.notify(methods.client.session.update, {
        sessionId,
        update: {
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: `chose ${chosen}` },
        },
      });
      return { stopReason: "end_turn" };
    });

const acpServer = new AcpServer({ createAgent });
const handle = createNodeHttpHandler(acpServer);
const httpServer = http.createServer(handle);
const sockets = new WebSocketServer({ noServer: true });
httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(acpServer, sockets));
httpServer.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${httpServer.address().port}/acp`);
});
process.on("SIGTERM", async () => {
  await acpServer.close();
  httpServer.close();
  process.exit(0);
});
