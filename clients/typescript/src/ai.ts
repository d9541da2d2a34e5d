/**
 * A Vercel AI SDK tool set over a Cairn space: `remember` and `recall`
 * (`import { cairnTools } from "cairn-client/ai"`; needs the `ai` and `zod` packages).
 *
 *   const tools = cairnTools(new Cairn({ apiKey }), { space: "alice" });
 *   await generateText({ model, tools, prompt });
 */
import { tool } from "ai";
import { z } from "zod";
import type { Cairn } from "./client.js";
import type { Filter } from "./types.js";

export interface CairnToolsOptions {
  /** The space remembered into and recalled from (one per user, agent or tenant). */
  space: string;
  /** The session `remember` appends to (default: one per UTC day, `remembered/YYYY-MM-DD`,
   * and per end user when `metadata` names one: `remembered/<user_id>/YYYY-MM-DD`, since a
   * session's metadata is fixed when it is made). */
  sessionId?: string | (() => string);
  /** Session metadata of new sessions, e.g. `{ user_id: "u1" }`: Cairn keeps each end
   * user's facts and profile apart by `user_id`, `agent_id` and `namespace`. */
  metadata?: Record<string, unknown>;
  /** Hits per recall (default 5; the model may ask for up to 20). */
  topK?: number;
  /** Tokens of packed context per recall (default 600). */
  tokenBudget?: number;
  /** Metadata filter applied to every recall (default: `metadata`'s `user_id`,
   * `agent_id` and `namespace`, so a user's tools recall what they remembered and nothing
   * of another user's). */
  filter?: Filter;
}

/** The partition keys of session metadata (Cairn's `PARTITION_KEYS`). */
const PARTITION_KEYS = ["user_id", "agent_id", "namespace"];

function partitionOf(metadata?: Record<string, unknown>): Record<string, unknown> | undefined {
  const found = Object.entries(metadata ?? {}).filter(([k, v]) => PARTITION_KEYS.includes(k) && v != null);
  return found.length ? Object.fromEntries(found) : undefined;
}

export function cairnTools(client: Cairn, options: CairnToolsOptions) {
  const { space, metadata } = options;
  const partition = partitionOf(metadata);
  const filter = options.filter ?? partition;
  const owner = partition ? Object.values(partition).map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join("/") + "/" : "";
  const day = () => `remembered/${owner}${new Date().toISOString().slice(0, 10)}`;
  const session = () => (typeof options.sessionId === "function" ? options.sessionId() : options.sessionId ?? day());
  return {
    remember: tool({
      description:
        "Save something worth remembering across conversations (a fact about the user, a preference, " +
        "a decision, a result) to long-term memory, in the user's own words.",
      inputSchema: z.object({
        text: z.string().min(1).describe("What to remember, as a self-contained sentence."),
      }),
      execute: async ({ text }, { abortSignal }) => {
        const sessionId = session();
        // Cairn dates a message sent without a time when it records it.
        const r = await client.addMessages(space, sessionId,
          [{ role: "user", text }],
          metadata ? { metadata } : {}, abortSignal ? { signal: abortSignal } : {});
        return { stored: r.messages_added > 0 || r.replayed, session_id: sessionId };
      },
    }),
    recall: tool({
      description:
        "Search long-term memory for what is known about a question (past conversations, facts, " +
        "preferences). Returns cited context.",
      inputSchema: z.object({
        query: z.string().min(1).describe("The question to find memories for."),
        top_k: z.number().int().min(1).max(20).optional().describe("How many memories to return."),
      }),
      execute: async ({ query, top_k }, { abortSignal }) => {
        const r = await client.recall(space, query, {
          top_k: top_k ?? options.topK ?? 5,
          token_budget: options.tokenBudget ?? 600,
          ...(filter ? { filter } : {}),
        }, abortSignal ? { signal: abortSignal } : {});
        return {
          context: r.context,
          memories: r.hits.map((h) => ({
            id: h.unit_id, text: h.text, score: h.score,
            session_id: h.session_id ?? null, occurred_at: h.occurred_at ?? null,
          })),
        };
      },
    }),
  };
}
