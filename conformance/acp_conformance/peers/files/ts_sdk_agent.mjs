// A small ACP agent served over Streamable HTTP and WebSocket by the official TypeScript SDK's
// AcpServer (@agentclientprotocol/sdk/experimental/server + node adapters). The checker's remote
// self-tests point `acp-conformance run --url` at it, so that the checker is exercised against a
// server it did not write.
// Usage: node ts_sdk_agent.mjs [--port N] [--defect NAME]; prints "listening PORT" when ready
// and stops when its stdin closes (or on SIGTERM).
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import { agent, methods, RequestError } from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";

const option = (name) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const port = Number(option("--port") ?? 0);

// Seeded transport defects (--defect NAME) for the checker's self-tests: each rewrites one
// status code the SDK's server got right, just before the headers go out.
const STATUS_DEFECTS = {
  "unknown-connection-400": { 404: 400 },
  "post-200": { 202: 200 },
  "wrong-content-type-400": { 415: 400 },
};
const statusDefect = STATUS_DEFECTS[option("--defect")] ?? {};
function seedDefect(res) {
  const flush = res.flushHeaders.bind(res);
  res.flushHeaders = () => {
    res.statusCode = statusDefect[res.statusCode] ?? res.statusCode;
    flush();
  };
}

function createEchoAgent() {
  // Session ids are per connection, like a real agent process per client.
  const sessions = new Set();
  const known = (sessionId) => {
    if (!sessions.has(sessionId)) throw RequestError.invalidParams({ sessionId }, "unknown session");
  };
  return agent({ name: "ts-sdk-echo" })
    .onRequest(methods.agent.initialize, () => ({
      protocolVersion: 1,
      agentCapabilities: { loadSession: false },
      authMethods: [],
      agentInfo: { name: "ts-sdk-echo", version: "2.4.0" },
    }))
    .onRequest(methods.agent.session.new, ({ params }) => {
      if (!params.cwd.startsWith("/")) throw RequestError.invalidParams({ cwd: params.cwd }, "cwd must be absolute");
      const sessionId = randomUUID();
      sessions.add(sessionId);
      return { sessionId };
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      known(params.sessionId);
      const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join("");
      await client.notify(methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
      });
      return { stopReason: "end_turn" };
    })
    .onRequest(methods.agent.authenticate, ({ params }) => {
      throw RequestError.invalidParams({ methodId: params.methodId }, "no such auth method");
    })
    .onRequest(methods.agent.session.setMode, ({ params }) => {
      known(params.sessionId);
      throw RequestError.invalidParams({ modeId: params.modeId }, "this agent has no modes");
    })
    .onRequest(methods.agent.session.setConfigOption, ({ params }) => {
      known(params.sessionId);
      throw RequestError.invalidParams({ configId: params.configId }, "no config options");
    })
    .onNotification(methods.agent.session.cancel, () => {});
}

const acp = new AcpServer({ createAgent: createEchoAgent });
const handleHttp = createNodeHttpHandler(acp);
const webSockets = new WebSocketServer({ noServer: true });
const handleUpgrade = createNodeWebSocketUpgradeHandler(acp, webSockets);

const server = createServer((req, res) => {
  if (new URL(req.url, "http://x").pathname !== "/acp") {
    res.writeHead(404).end();
    return;
  }
  seedDefect(res);
  handleHttp(req, res);
});
server.on("upgrade", (req, socket, head) => {
  if (new URL(req.url, "http://x").pathname !== "/acp") {
    socket.destroy();
    return;
  }
  handleUpgrade(req, socket, head);
});

const stop = () => {
  void acp.close().finally(() => server.close(() => process.exit(0)));
  server.closeAllConnections?.();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();

server.listen(port, "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
