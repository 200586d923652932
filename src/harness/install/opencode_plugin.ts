// aidlc-engine.ts: written by `aidlc hook install --harness opencode`; `aidlc hook install
// --harness opencode --uninstall` removes it. opencode loads every plugin in .opencode/plugin/.
//
// This plugin hands opencode's write and prompt events to aidlc's hooks, as JSON on their
// stdin, and waits for them: a write to `aidlc engine hook run-sensors` (which fires the
// active stage's write-fired sensors), a prompt in a main session to
// `aidlc engine hook record-human-turn` (which records the human turn), and each tool call,
// before it runs, to `aidlc engine hook guard`, which refuses (exit 2, the reason on stderr)
// an agent's write into the audit or a command that is the human's; the plugin throws that
// reason, which refuses the call. The write and prompt hooks' output goes nowhere (the write
// hook records what it could not check in its drop log). The payload is opencode's own hook
// input, with `hook_event_name` and `directory`.
import { spawn } from "node:child_process";

const RUN_SENSORS = @RUN_SENSORS@;
const RECORD_HUMAN_TURN = @RECORD_HUMAN_TURN@;
const GUARD = @GUARD@;

/** The tools whose calls write files: the file tools, and the shell (the hook compares the
 * project before and after the call; the guard keeps the "before"). */
const WRITE_TOOLS = new Set(["write", "edit", "apply_patch", "bash"]);

function runHook(command: string, payload: Record<string, unknown>, directory: string): Promise<void> {
  return new Promise((resolve) => {
    try {
      const child = spawn(command, { cwd: directory, shell: true, stdio: ["pipe", "ignore", "ignore"] });
      child.on("error", () => resolve());
      child.on("close", () => resolve());
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(payload));
    } catch {
      resolve();
    }
  });
}

/** Run the guard; its reason when it refuses (any exit but 0, or no exit), else null. */
function runGuard(payload: Record<string, unknown>, directory: string): Promise<string | null> {
  return new Promise((resolve) => {
    try {
      const child = spawn(GUARD, { cwd: directory, shell: true, stdio: ["pipe", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += chunk));
      child.on("error", (error) => resolve(`aidlc guard could not run: ${error.message}`));
      child.on("close", (code) => resolve(code === 0 ? null : stderr.trim() || `aidlc guard exited ${code}`));
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(payload));
    } catch (error) {
      resolve(`aidlc guard could not run: ${String(error)}`);
    }
  });
}

type Client = {
  session: { get: (options: { path: { id: string } }) => Promise<{ data?: { parentID?: string } }> };
};

export default async ({ client, directory }: { client: Client; directory: string }) => {
  /** A session with no parent is the human's; a lookup that fails is not known to be. */
  async function isMainSession(sessionID: string): Promise<boolean> {
    try {
      const session = await client.session.get({ path: { id: sessionID } });
      return !session.data?.parentID;
    } catch {
      return false;
    }
  }

  return {
    "tool.execute.before": async (input: { tool: string; sessionID: string; callID: string }, output: { args: Record<string, unknown> }) => {
      const refused = await runGuard({ hook_event_name: "tool.execute.before", directory, ...input, args: output.args }, directory);
      if (refused !== null) throw new Error(refused);
    },
    "tool.execute.after": async (input: { tool: string; sessionID: string; callID: string; args: Record<string, unknown> }) => {
      if (!WRITE_TOOLS.has(input.tool)) return;
      await runHook(RUN_SENSORS, { hook_event_name: "tool.execute.after", directory, ...input }, directory);
    },
    "chat.message": async (
      input: { sessionID: string; agent?: string },
      output: { parts: Array<{ type?: string; text?: string }> },
    ) => {
      const mainSession = await isMainSession(input.sessionID);
      await runHook(
        RECORD_HUMAN_TURN,
        { hook_event_name: "chat.message", directory, ...input, parts: output.parts, main_session: mainSession },
        directory,
      );
    },
  };
};
