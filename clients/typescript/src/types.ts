/**
 * The shapes of the HTTP API, as the server sends them (wire names, snake_case).
 * `scripts/check-spec.mjs` compiles `test/spec-types.ts`, which fails when a schema of
 * `crates/cairn-server/openapi.json` has a property these types lack or type differently.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type UnitKind = "turn" | "round" | "episode" | "slice" | "event" | "note" | "fact" | "profile";

export interface Health {
  status: string;
  version?: string;
}

export interface Ready {
  status: string;
  spaces: number;
}

export interface SpaceStats {
  space: string;
  sessions: number;
  messages: number;
  trajectories?: number;
  units: number;
  units_by_kind: Record<string, number>;
}

export interface SpaceCreated {
  name: string;
  created: boolean;
}

export interface Removed {
  removed_units: number;
}

export interface IngestReport {
  sessions: number;
  trajectories?: number;
  unchanged: number;
  messages_added: number;
  units: number;
  vectors_computed: number;
  vectors_cached: number;
  /** Set by the client: the server answered a repeat of an earlier request with the same
   * idempotency key (`Idempotency-Replayed: true`), so nothing was written again. */
  replayed: boolean;
}

export interface Message {
  /** Unique in the session; defaults to the position. */
  id?: string;
  role?: "user" | "assistant" | "system";
  /** Any name (group chats); role or speaker is required. */
  speaker?: string;
  text: string;
  occurred_at?: string;
  metadata?: unknown;
}

export interface SessionInput {
  id: string;
  /** Alias on input: `date`. */
  occurred_at?: string;
  date?: string;
  group?: string;
  messages: Message[];
  metadata?: unknown;
}

export interface SessionRecord {
  space: string;
  recorded_at: string;
  session: SessionInput;
}

export interface Page<T> {
  items: T[];
  total: number;
  offset: number;
  /** Where the next page starts; absent on the last page. */
  next_offset?: number;
}
export type SessionPage = Page<SessionRecord>;
export type UnitPage = Page<Unit>;

export interface AddMessages {
  session_id: string;
  messages: Message[];
  occurred_at?: string;
  group?: string;
  /** Session metadata, e.g. {"user_id": "u1"}. */
  metadata?: unknown;
}

export interface GroupMessage {
  id?: string;
  speaker: string;
  group: string;
  /** When it was said; decides the day (the session is `<group>/<YYYY-MM-DD>`). */
  time: string;
  text: string;
  metadata?: unknown;
}

/** A metadata filter: `{"user_id": "u1", "score": {"gte": 3}}` or explicit
 * `{"field": "metadata.user_id", "op": "eq", "value": "u1"}` with `and`/`or`/`not`. */
export type Filter = Record<string, unknown>;

export interface RecallOptions {
  top_k?: number;
  token_budget?: number;
  format?: "synthesized" | "raw";
  as_of?: string;
  since?: string;
  quotas?: Partial<Record<UnitKind, number>>;
  sessions?: string[];
  speakers?: string[];
  groups?: string[];
  kinds?: UnitKind[];
  filter?: Filter;
}

export interface RecallRequest extends RecallOptions {
  query: string;
}

export interface Hit {
  unit_id: string;
  kind: UnitKind;
  text: string;
  score: number;
  session_id?: string;
  turn_ids: string[];
  speakers: string[];
  occurred_at?: string;
  /** For trajectory units: the trajectory and its states `[first, end)`. */
  trajectory_id?: string;
  states?: [number, number];
  /** For a fact a later statement replaced: the unit of the current version. */
  superseded_by?: string;
}

export interface Recall {
  hits: Hit[];
  context: string;
  context_tokens: number;
  hits_cut: number;
  context_unit_ids: string[];
  timings: Record<string, number>;
}

export interface Provenance {
  session_id?: string;
  message_ids: string[];
  first_position: number;
  speakers: string[];
  group?: string;
  trajectory_id?: string;
  states?: [number, number];
}

export interface Unit {
  id: string;
  space: string;
  kind: UnitKind;
  text: string;
  key: string;
  embed_text?: string;
  provenance: Provenance;
  part_of?: string;
  occurred_at?: string;
  recorded_at: string;
  /** Structured content of fact and profile units. */
  detail?: Record<string, unknown>;
}

export interface MemoryDeleted {
  removed_units: number;
  session_id?: string;
  forgotten_messages?: string[] | null;
  forgotten_session?: boolean;
  trajectory_id?: string;
  forgotten_trajectory?: boolean;
}

export interface AgentState {
  url?: string;
  action?: string;
  thought?: string;
  /** Accessibility tree text (`accessibility_tree` is accepted on input too). */
  observation?: string;
  accessibility_tree?: string;
  screenshot?: string;
}

export interface TrajectoryInput {
  id: string;
  domain?: string;
  goal: string;
  start_url?: string;
  /** true/false, "success"/"failure", or any JSON. */
  outcome?: unknown;
  states: AgentState[];
  occurred_at?: string;
  metadata?: unknown;
}

export interface TrajectoryRecord {
  space: string;
  recorded_at: string;
  trajectory: TrajectoryInput;
}

export interface TrajectorySummary {
  id: string;
  domain: string | null;
  goal: string;
  outcome: unknown;
  succeeded: boolean | null;
  steps: number;
  urls: string[];
  recorded_at: string;
}

export interface FactVersion {
  unit_id: string;
  subject: string;
  value: string;
  valid_from: string | null;
  valid_to: string | null;
  superseded_by: string | null;
  session_id: string | null;
  message_id: string | null;
  speaker: string | null;
  group: string | null;
  text: string;
}

export interface FactHistory {
  subject: string;
  /** Oldest first; the last is current. */
  versions: FactVersion[];
}

export interface Evidence {
  what: string;
  session_id: string;
  message_id: string;
}

export interface Style {
  avg_words: number;
  question_rate: number;
  exclamation_rate: number;
  emoji_rate: number;
  formality: number;
  directive_rate: number;
  collaborative_rate: number;
  avg_reply_seconds: number | null;
  traits: string[];
}

export interface SpeakerProfile {
  speaker: string;
  messages: number;
  groups: string[];
  first_seen: string | null;
  last_seen: string | null;
  style: Style;
  roles: Evidence[];
  skills: Evidence[];
  topics: string[];
  summary: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  field?: string;
}

export interface ListSessionsOptions {
  limit?: number;
  offset?: number;
  filter?: Filter;
}

export interface ListMemoriesOptions extends ListSessionsOptions {
  kind?: UnitKind;
  session_id?: string;
  speaker?: string;
  since?: string;
  until?: string;
}
