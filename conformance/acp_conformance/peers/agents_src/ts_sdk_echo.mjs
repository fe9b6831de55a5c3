// A minimal echo agent on the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0), built
// with its acp.agent() builder, for the peers matrix. It creates sessions, answers a prompt by
// streaming the prompt's text back, and honours session/cancel. The SDK is imported from the
// file named by ACP_SDK_ENTRY, so this script ships with the checker while the SDK itself is
// installed in the peers cache.
import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const acp = await import(pathToFileURL(process.env.ACP_SDK_ENTRY).href);

const sessions = new Set();
const turns = new Map(); // session id -> AbortController of its running prompt

function knownSession(sessionId) {
  if (!sessions.has(sessionId)) {
    throw acp.RequestError.invalidParams({ sessionId }, "unknown session");
  }
}

const app = acp
  .agent()
  .onRequest("initialize", () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {},
    authMethods: [],
    agentInfo: { name: "ts-sdk-echo", version: "2.4.0" },
  }))
  .onRequest("session/new", () => {
    const sessionId = randomUUID();
    sessions.add(sessionId);
    return { sessionId };
  })
  .onRequest("session/prompt", async ({ params, client }) => {
    knownSession(params.sessionId);
    const turn = new AbortController();
    turns.set(params.sessionId, turn);
    try {
      for (const block of params.prompt) {
        if (turn.signal.aborted) break;
        if (block.type !== "text") continue;
        await client.notify("session/update", {
          sessionId: params.sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: block.text } },
        });
      }
      return { stopReason: turn.signal.aborted ? "cancelled" : "end_turn" };
    } finally {
      turns.delete(params.sessionId);
    }
  })
  .onNotification("session/cancel", ({ params }) => {
    turns.get(params.sessionId)?.abort();
  });

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
app.connect(stream);
