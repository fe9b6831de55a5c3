// A small ACP client on the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0, its
// acp.client() builder), shipped so that `acp-conformance client` can be tried on it:
//   acp-conformance client -- node ts_sdk_client.mjs --scenario {scenario} --agent {agent}
// It spawns the agent, sends initialize (advertising fs read/write), session/new and one
// prompt, allows permission requests, reads and writes files, and exits once the prompt is
// answered; in the "cancel" scenario it cancels from inside the permission request, in the
// "load" scenario it loads an earlier session instead of creating one. The SDK
// comes from ACP_SDK_ENTRY when set, else from this folder's node_modules (npm install).
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const acp = await import(
  process.env.ACP_SDK_ENTRY ? pathToFileURL(process.env.ACP_SDK_ENTRY).href : "@agentclientprotocol/sdk"
);

const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const agentCmd = flag("--agent");
const cancel = flag("--scenario") === "cancel";
const load = flag("--scenario") === "load";
// The id acp_conformance.client.scenarios.EARLIER_SESSION_ID names.
const EARLIER_SESSION_ID = "sess-conformance-earlier";
// The agent command arrives as one shell-quoted string; a shell splits it.
const child = spawn("/bin/sh", ["-c", `exec ${agentCmd}`], { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

let ctxRef;
const app = acp
  .client()
  .onRequest("session/request_permission", async ({ params }) => {
    if (cancel) {
      await ctxRef.notify("session/cancel", { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    const allow = params.options.find((o) => o.kind.startsWith("allow")) ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onRequest("fs/read_text_file", async ({ params }) => ({ content: await readFile(params.path, "utf8") }))
  .onRequest("fs/write_text_file", async ({ params }) => {
    await writeFile(params.path, params.content, "utf8");
    return {};
  })
  .onNotification("session/update", () => {});

let code = 0;
try {
  await app.connectWith(stream, async (ctx) => {
    ctxRef = ctx;
    await ctx.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "ts-sdk-recipe", version: "2.4.0" },
    });
    let sessionId = EARLIER_SESSION_ID;
    if (load) {
      await ctx.request("session/load", { sessionId, cwd: process.cwd(), mcpServers: [] });
    } else {
      sessionId = (await ctx.request("session/new", { cwd: process.cwd(), mcpServers: [] })).sessionId;
    }
    await ctx.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Hello" }],
    });
  });
} catch (err) {
  console.error(`ts-sdk-recipe: ${err?.message ?? err}`);
  code = 1;
}
child.stdin.end();
child.kill();
process.exit(code);
