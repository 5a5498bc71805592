// cao's bridge into pi, loaded with `pi -e <this file>` (pi compiles TypeScript itself, no build step).
//
// pi has no MCP client of its own, and no hooks other than its extensions' events. This extension gives it
// both, from the JSON file that CAO_PI_BRIDGE names (written by cao's launch for this terminal):
//
// - `servers`: the profile's MCP servers (each a stdio command). Every one is started before pi's session
//   starts (pi waits for an extension's asynchronous start), asked for its tools, and each tool is
//   registered with pi as `mcp__<server>__<tool>`; a call is passed to the server as `tools/call`.
// - `signal`: cao's signal command. `agent_start` and `agent_end` (with the turn's last answer, its stop
//   reason and error) are sent through it, so cao hears the turn's status from pi itself.
// - `tools`: the built-in tools the profile allows, or null for all; the bridged tools stay active.
//
// Nothing here writes to the terminal: pi draws the screen, and a stray line would corrupt it.

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

type ServerEntry = { command: string; args?: string[]; env?: Record<string, string>; cwd?: string };
type BridgeConfig = {
  servers?: Record<string, ServerEntry>;
  signal?: string[] | null;
  tools?: string[] | null;
  connect_timeout_ms?: number;
};
type Pending = { resolve: (value: any) => void; reject: (error: Error) => void };

const PROTOCOL_VERSION = "2025-06-18";
// Tool names the model APIs accept (OpenAI's rule, the strictest).
const TOOL_NAME = /[^A-Za-z0-9_-]/g;

class StdioClient {
  private child: ChildProcess;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private buffer = "";
  private closed: Error | null = null;

  constructor(readonly name: string, entry: ServerEntry) {
    this.child = spawn(entry.command, entry.args ?? [], {
      cwd: entry.cwd || undefined,
      env: { ...process.env, ...(entry.env ?? {}) },
      // The server's stderr would be drawn over pi's screen.
      stdio: ["pipe", "pipe", "ignore"],
    });
    this.child.on("error", (error) =>
      this.fail(new Error(`MCP server ${name} did not start: ${error.message}`)));
    this.child.on("exit", (code, sig) => this.fail(new Error(`MCP server ${name} exited (${sig ?? code})`)));
    this.child.stdin?.on("error", () => {});
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (chunk: string) => this.read(chunk));
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.closed = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }

  private read(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, end).trim();
      this.buffer = this.buffer.slice(end + 1);
      if (!line) continue;
      let message: any;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      for (const one of Array.isArray(message) ? message : [message]) this.take(one);
    }
  }

  private take(message: any): void {
    if (message && "method" in message) {
      // A request of the server's own (ping, roots/list): answer it, or it may wait for ever.
      if (message.id !== undefined && message.id !== null) {
        const answer = message.method === "ping" || message.method === "roots/list"
          ? { result: message.method === "ping" ? {} : { roots: [] } }
          : { error: { code: -32601, message: `method not found: ${message.method}` } };
        this.send({ jsonrpc: "2.0", id: message.id, ...answer });
      }
      return;
    }
    const waiter = this.pending.get(message?.id);
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.error) waiter.reject(new Error(message.error.message ?? JSON.stringify(message.error)));
    else waiter.resolve(message.result);
  }

  private send(message: unknown): void {
    this.child.stdin?.write(JSON.stringify(message) + "\n");
  }

  request(method: string, params: unknown, signal?: AbortSignal): Promise<any> {
    if (this.closed) return Promise.reject(this.closed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      signal?.addEventListener("abort", () => {
        if (!this.pending.delete(id)) return;
        this.notify("notifications/cancelled", { requestId: id, reason: "cancelled by the user" });
        reject(new Error("cancelled"));
      }, { once: true });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method: string, params?: unknown): void {
    if (!this.closed) this.send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  close(): void {
    this.fail(new Error(`MCP server ${this.name} closed`));
    this.child.stdin?.end();
    this.child.kill();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const late = new Promise<T>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function listTools(client: StdioClient, timeoutMs: number): Promise<any[]> {
  await withTimeout(client.request("initialize", {
    protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "cao-pi-bridge", version: "1" },
  }), timeoutMs, `MCP server ${client.name}`);
  client.notify("notifications/initialized");
  const tools: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await withTimeout(client.request("tools/list", cursor ? { cursor } : {}), timeoutMs,
                                   `MCP server ${client.name}`);
    tools.push(...(page?.tools ?? []));
    cursor = page?.nextCursor;
  } while (cursor);
  return tools;
}

function toolText(result: any): string {
  const parts = (result?.content ?? []).map((item: any) =>
    item?.type === "text" ? String(item.text) : JSON.stringify(item));
  if (parts.length === 0 && result?.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  return parts.join("\n");
}

// pi awaits an extension's handler before it redraws, so the signal is sent (the command exits as soon
// as its datagram is out) before pi takes its spinner away: cao hears the turn's end before the screen
// shows it. A command that hangs is waited for SIGNAL_WAIT_MS at most.
const SIGNAL_WAIT_MS = 2000;

function sender(command: string[] | null | undefined): (event: string, payload: object) => Promise<void> {
  if (!command || command.length === 0) return async () => {};
  return (event, payload) => new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, SIGNAL_WAIT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      const child = spawn(command[0], [...command.slice(1), "--stdin", event],
                          { stdio: ["pipe", "ignore", "ignore"] });
      child.on("error", done);
      child.on("close", done);
      child.stdin?.on("error", () => {});
      child.stdin?.end(JSON.stringify(payload));
    } catch {
      // A signal lost leaves cao reading the screen, as when signals are off.
      done();
    }
  });
}

function answerOf(messages: any[]): any {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "assistant") return messages[i];
  }
  return null;
}

export default async function (pi: any) {
  const config: BridgeConfig = JSON.parse(readFileSync(process.env.CAO_PI_BRIDGE ?? "", "utf8"));
  const signal = sender(config.signal);
  const timeoutMs = config.connect_timeout_ms ?? 30000;
  const clients: StdioClient[] = [];
  const bridged: string[] = [];
  const problems: string[] = [];

  await Promise.all(Object.entries(config.servers ?? {}).map(async ([server, entry]) => {
    const client = new StdioClient(server, entry);
    clients.push(client);
    try {
      for (const tool of await listTools(client, timeoutMs)) {
        const name = `mcp__${server}__${tool.name}`.replace(TOOL_NAME, "_").slice(0, 64);
        bridged.push(name);
        pi.registerTool({
          name,
          label: `${server}: ${tool.name}`,
          description: tool.description ?? `${tool.name} (MCP server ${server})`,
          parameters: tool.inputSchema ?? { type: "object", properties: {} },
          async execute(_id: string, params: unknown, abort?: AbortSignal) {
            const call = { name: tool.name, arguments: params ?? {} };
            const result = await client.request("tools/call", call, abort);
            const text = toolText(result);
            if (result?.isError) throw new Error(text || `${tool.name} failed`);
            return { content: [{ type: "text", text }], details: {} };
          },
        });
      }
    } catch (error) {
      problems.push((error as Error).message);
      client.close();
    }
  }));

  pi.on("session_start", async (_event: any, ctx: any) => {
    if (config.tools) pi.setActiveTools([...config.tools, ...bridged]);
    for (const problem of problems) ctx.ui?.notify?.(problem, "error");
  });
  pi.on("agent_start", async () => await signal("agent_start", {}));
  pi.on("agent_end", async (event: any) => {
    const last = answerOf(event?.messages ?? []);
    const text = (last?.content ?? []).filter((part: any) => part?.type === "text")
      .map((part: any) => part.text).join("");
    await signal("agent_end", {
      stop_reason: last?.stopReason ?? "none",
      ...(last?.errorMessage ? { error: last.errorMessage } : {}),
      ...(last?.stopReason === "stop" && text ? { last_assistant_message: text } : {}),
    });
  });
  pi.on("session_shutdown", async () => {
    for (const client of clients) client.close();
  });
  process.once("exit", () => {
    for (const client of clients) client.close();
  });
}
