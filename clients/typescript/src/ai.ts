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
  /** The session `remember` appends to (default: one per UTC day, `remembered/YYYY-MM-DD`). */
  sessionId?: string | (() => string);
  /** Session metadata of new sessions, e.g. `{ user_id: "u1" }`. */
  metadata?: Record<string, unknown>;
  /** Hits per recall (default 5; the model may ask for up to 20). */
  topK?: number;
  /** Tokens of packed context per recall (default 600). */
  tokenBudget?: number;
  /** Metadata filter applied to every recall. */
  filter?: Filter;
}

const day = () => `remembered/${new Date().toISOString().slice(0, 10)}`;

export function cairnTools(client: Cairn, options: CairnToolsOptions) {
  const { space, metadata, filter } = options;
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
