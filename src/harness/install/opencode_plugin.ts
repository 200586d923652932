// aidlc-engine.ts: written by `aidlc hook install --harness opencode`; `aidlc hook install
// --harness opencode --uninstall` removes it. opencode loads every plugin in .opencode/plugin/.
//
// This plugin hands opencode's write and prompt events to aidlc's hooks, as JSON on their
// stdin, and waits for them: a write to `aidlc engine hook run-sensors` (which fires the
// active stage's write-fired sensors), a prompt in a main session to
// `aidlc engine hook record-human-turn` (which records the human turn). Both always exit 0;
// what they print goes nowhere (the write hook records what it could not check in its drop
// log). The payload is opencode's own hook input, with `hook_event_name` and `directory`.
import { spawn } from "node:child_process";

const RUN_SENSORS = @RUN_SENSORS@;
const RECORD_HUMAN_TURN = @RECORD_HUMAN_TURN@;

/** The tools whose calls write files. */
const WRITE_TOOLS = new Set(["write", "edit", "apply_patch"]);

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
