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
  /** Estimated bytes of the space's rows in the store (not shared index files). */
  disk_bytes?: number;
  /** When the newest session or trajectory was recorded. */
  last_recorded_at?: string;
}

export interface SpaceCreated {
  name: string;
  created: boolean;
}

export interface Removed {
  removed_units: number;
}
/** An end-user partition: some of `user_id`, `agent_id`, `namespace` with their values. */
export interface Partition {
  user_id?: unknown;
  agent_id?: unknown;
  namespace?: unknown;
}
/** The body of `forgetPartition`. */
export interface ForgetPartition {
  partition: Partition;
}
/** What forgetting an end user (a partition) removed; all zero when it held nothing. */
export interface ForgotPartition {
  sessions: number;
  messages: number;
  units: number;
}
/** What forgetting a message (with `exchange`, and its reply) removed. */
export interface ForgotMessages {
  session_id: string;
  forgotten_messages: string[];
  forgotten_session: boolean;
  removed_units: number;
}
export interface ForgetMessageOptions {
  /** Also forget the reply to the message (the next message, when the other party wrote it). */
  exchange?: boolean;
}

export interface IngestReport {
  sessions: number;
  trajectories?: number;
  unchanged: number;
  messages_added: number;
  /** Messages that came without a time: each was given the time it was recorded. */
  dated_at_recording?: number;
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

/** Something a read answered but wants its caller to know: `code` (`unknown_filter_key`:
 * a `filter` names a metadata key no session the request may see carries, most often a
 * misspelling), the request's `field` (`filter.userid`) and a `message`. */
export interface Warning {
  code: string;
  field: string;
  message: string;
}

export interface Page<T> {
  items: T[];
  total: number;
  offset: number;
  /** Where the next page starts; absent on the last page. */
  next_offset?: number;
  /** What the server wants the caller to know about the request (a `filter` key no session
   * carries); also handed to `CairnOptions.onWarning`. Absent when there is nothing to say. */
  warnings?: Warning[];
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
  /** Only one end user's partition (`{ user_id: "u1" }`); a key pinned to a partition is
   * held in its own whatever this says. */
  partition?: Partition;
  /** The relevance floor (cosine of query and hit, -1..1; the server's stock floor when
   * absent, -1 turns it off): when no hit reaches it, there are none and
   * `no_relevant_memory` is true. */
  min_relevance?: number;
  /** Explain each hit's score (`hits[].explain`) and what packing did (`explain`). */
  explain?: boolean;
}

export interface RecallRequest extends RecallOptions {
  query: string;
}

/** What one candidate list (lexical: BM25, dense: cosine) gave a hit. */
export interface ListScore {
  score: number;
  /** Place in the list as searched, from 1; absent for a cosine computed by completion. */
  rank?: number;
  fused: number;
}

export interface ScoreAdjustment {
  step: "container_credit" | "session_evidence" | "question_penalty" | "time_boost" | "session_decay"
    | "version_placement" | "profile_placement" | "fact_folded" | "personal_fact"
    | "preference_placement" | "newest_placement" | "graph_link" | "learned";
  op: "add" | "multiply" | "set";
  by: number;
  score_after: number;
  note: string;
}

/** Why a hit scored what it did (`recall(..., { explain: true })`). */
export interface HitExplanation {
  scored_as?: string;
  lexical?: ListScore;
  dense?: ListScore;
  fused: number;
  /** The signals a learned ranking weighs, by name (`[engine.rank.learned]`). */
  features?: Record<string, number>;
  adjustments: ScoreAdjustment[];
  version_notes?: string[];
  placed_above?: string;
}

/** What a recall's stages kept, skipped and packed (`explain: true`). */
export interface RecallExplanation {
  /** Candidates kept by each stage. */
  counts: { lexical: number; dense: number; completed: number; fused: number; visible: number; ranked: number };
  quota_skipped: string[];
  packing: {
    token_budget: number;
    tokens_used: number;
    entries: { unit_id: string; outcome: "whole" | "trimmed" | "cut" | "duplicate" | "dropped"; full_tokens: number; tokens: number }[];
  };
  stages: { stage: string; ms: number }[];
}

/** One unit of a place hit's excerpt, with the messages it covers. */
export interface HitPart {
  unit_id: string;
  turn_ids: string[];
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
  /** The units a place hit's excerpt shows (its best first, then in rank order), when it
   * shows several; `context_unit_ids` names each part the context shows. */
  parts?: HitPart[];
  /** Cosine of the hit's and the query's embeddings: one scale for every recall, so it
   * can be thresholded (`score` only orders one recall's hits). Absent without a vector. */
  relevance?: number;
  /** How the entity graph linked the hit to the question; absent: it played no part. */
  via?: string;
  explain?: HitExplanation;
}

/** A line of the user's card: the newest statement of one of the user's chains. */
export interface CardLine {
  /** The fact unit it cites. */
  unit_id: string;
  /** `instruction` for a standing instruction, else the fact's category. */
  category: string;
  /** The sentence that states it, verbatim. */
  statement: string;
  stated_at?: string | null;
  session_id: string;
  message_id: string;
}

export interface Recall {
  hits: Hit[];
  /** Places after the first `top_k` that the context also shows (the budget had room). */
  extra_hits?: Hit[];
  context: string;
  /** The user's card at the head of `context`: standing instructions, then what the user
   * said of themself that holds now and bears on the query, each cited. Absent when none. */
  card?: CardLine[];
  context_tokens: number;
  hits_cut: number;
  /** The hits not shown whole in `context`: trimmed, shown in part or left out. */
  hits_cut_ids: string[];
  /** Nothing passed the relevance floor: no hits, and the context holds at most the user's card. */
  no_relevant_memory: boolean;
  context_unit_ids: string[];
  timings: Record<string, number>;
  explain?: RecallExplanation;
  /** What the server wants the caller to know about the request (a `filter` key no session
   * carries); also handed to `CairnOptions.onWarning`. Absent when there is nothing to say. */
  warnings?: Warning[];
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

export interface ForgotMemory {
  memory_id?: string;
  removed_units: number;
  session_id?: string;
  forgotten_messages?: string[] | null;
  forgotten_session?: boolean;
  trajectory_id?: string;
  forgotten_trajectory?: boolean;
}
/** The name of `ForgotMemory` before 0.2.0. */
export type MemoryDeleted = ForgotMemory;

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
  /** The value as a reader says it ("dislikes jazz", "no longer Acme"). */
  statement: string;
  valid_from: string | null;
  valid_to: string | null;
  superseded_by: string | null;
  session_id: string | null;
  message_id: string | null;
  speaker: string | null;
  group: string | null;
  text: string;
  /** A personal fact's person (the speaker, or a relation of theirs: "user's sister"). */
  person?: string;
  /** A personal fact's category. */
  category?: FactSubject["category"];
  /** The statement denies the value. */
  negated?: boolean;
  /** When the stated change took effect, when the statement dates it. */
  since?: string;
}

export interface FactHistory {
  subject: string;
  /** Oldest first; the last is current. */
  versions: FactVersion[];
  /** What the server wants the caller to know about the request (a `filter` key no session
   * carries); also handed to `CairnOptions.onWarning`. Absent when there is nothing to say. */
  warnings?: Warning[];
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
  /** What the speaker said of themself that still holds in the request's scope. */
  facts: ProfileFact[];
  summary: string;
  /** What the server wants the caller to know about the request (a `filter` key no session
   * carries); also handed to `CairnOptions.onWarning`. Absent when there is nothing to say. */
  warnings?: Warning[];
}

/** A personal fact in a profile: the current value of one of the speaker's chains. */
export interface ProfileFact {
  category: FactCategory;
  attribute: string;
  value: string;
  negated: boolean;
  stated_at: string | null;
  earlier: number;
  session_id: string;
  message_id: string;
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
  /** A derived kind to list, or `all` for every unit. Default: one memory per message,
   *  fact and trajectory (kinds turn, fact, note). */
  kind?: UnitKind | "all";
  session_id?: string;
  speaker?: string;
  since?: string;
  until?: string;
  /** Only memories seen as of this time (occurred by then; undated ones recorded by then). */
  as_of?: string;
}

/** What a read sees: the sessions `filter` admits (e.g. `{ user_id: "u1" }`), as of
 * `as_of` (default now). A scoped read answers as if the space held nothing else. */
export interface ScopeOptions {
  as_of?: string;
  filter?: Filter;
}

// ---- the entity graph

export type EntityKind = "person" | "place" | "organization" | "thing";

/** A person, place, organization or thing the space's messages name. */
export interface EntitySummary {
  name: string;
  kind: EntityKind;
  /** Other forms merged into it ("mel" for "Melanie"), lowercased. */
  aliases: string[];
  /** Units linked to it. */
  mention_count: number;
  sessions: number;
  first_seen?: string;
  last_seen?: string;
}

/** A unit linked to an entity. */
export interface EntityMention {
  unit_id: string;
  edge: "speaker_of" | "mention" | "fact_subject";
  session_id?: string;
  message_ids: string[];
  surface: string;
  occurred_at?: string;
  recorded_at: string;
}

/** Another entity met in the same sessions. */
export interface EntityRelation {
  name: string;
  kind: EntityKind;
  sessions: number;
  /** Messages that link both. */
  messages: number;
  first_seen?: string;
  last_seen?: string;
}

export interface TimelineEntry {
  session_id: string;
  first?: string;
  mentions: number;
}

/** One entity with its mentions (oldest first), relations and timeline. */
export interface EntityDetail extends EntitySummary {
  mentions: EntityMention[];
  relations: EntityRelation[];
  timeline: TimelineEntry[];
  /** What the server wants the caller to know about the request (a `filter` key no session
   * carries); also handed to `CairnOptions.onWarning`. Absent when there is nothing to say. */
  warnings?: Warning[];
}

// ---- the caller, fact subjects

/** Who the key is (`me()`). */
export interface Me {
  /** The key's public id; `admin` for the admin key, `local` without auth. */
  key_id: string;
  label?: string;
  /** Sees every space (the admin key, or a server without auth). */
  admin: boolean;
  read_only: boolean;
  /** The existing spaces the caller sees. */
  spaces: string[];
  /** The spaces the key is for, existing or not (absent for admin). */
  scope?: string[];
  /** The end-user partition the key is pinned to (`{ user_id: "u1" }`), if any. */
  partition?: Partition;
}

/** The kinds of personal fact. */
export type FactCategory =
  | "home" | "work" | "role" | "family" | "pet" | "possession" | "health" | "diet"
  | "preference" | "habit" | "plan" | "count";

/** A subject the space holds versioned facts about (what `history` takes). */
export interface FactSubject {
  subject: string;
  versions: number;
  current_value: string;
  /** The newest statement as a reader says it ("dislikes jazz", "no longer Acme"). */
  statement: string;
  last_stated?: string;
  /** A personal fact's person (the speaker, or a relation of theirs: "user's sister"). */
  person?: string;
  /** A personal fact's category. */
  category?: FactCategory;
  /** The current statement says it does not hold. */
  negated?: boolean;
}

// ---- trajectory inspection (every answer bounded; its cuts said in `truncated`)

export type ManifestForm = "concise" | "full";
export type PatternMode = "regex" | "words";

/** One state in a summary or full manifest; `action` names the element acted on. */
export interface StepLine {
  state: number;
  url?: string;
  title?: string;
  thought?: string;
  action?: string;
  screenshot?: string;
}

export interface ManifestEntry {
  id: string;
  domain?: string;
  goal: string;
  start_url?: string;
  outcome: string;
  succeeded?: boolean | null;
  states: number;
  /** Only in the `full` form. */
  steps?: StepLine[];
  truncated?: string;
}

/** A page of the manifest: `next_offset` says where the next starts. */
export interface Manifest {
  form: ManifestForm;
  total: number;
  offset: number;
  entries: ManifestEntry[];
  next_offset?: number;
  /** What the page left out, in words. */
  truncated?: string;
}

export interface ManifestOptions {
  form?: ManifestForm;
  offset?: number;
  /** Default 200 concise, 25 full; at most 1000. */
  limit?: number;
}

/** A trajectory's summary: a line per state (at most 120). */
export interface TrajectoryOverview {
  id: string;
  domain?: string;
  goal: string;
  start_url?: string;
  outcome: string;
  succeeded?: boolean | null;
  states: number;
  steps: StepLine[];
  truncated?: string;
}

/** One state for reading: the page whole or cut in the middle (the cut marked in it). */
export interface StateView {
  trajectory_id: string;
  state: number;
  states: number;
  url?: string;
  title?: string;
  thought?: string;
  action?: string;
  screenshot?: string;
  observation: string;
  observation_chars: number;
  truncated?: string;
}

export interface SpanView {
  trajectory_id: string;
  goal: string;
  start: number;
  end: number;
  states: StateView[];
  truncated?: string;
}

export interface MatchLine {
  field: "url" | "thought" | "action" | "page";
  text: string;
}

export interface StateMatch {
  trajectory_id: string;
  state: number;
  url?: string;
  title?: string;
  action?: string;
  words_matched: number;
  lines: MatchLine[];
  more_lines: number;
}

/** The states matching a pattern (one trajectory's, or a search of the space). */
export interface Matches {
  pattern: string;
  mode: PatternMode;
  trajectory_id?: string;
  trajectories_searched: number;
  states_matched: number;
  states: StateMatch[];
  truncated?: string;
}

export interface PatternOptions {
  /** `match`: `regex` (default) or `words`; `search`: `words` (default) or `regex`. */
  mode?: PatternMode;
  limit?: number;
}

/** States `start_state` to `end_state` (inclusive, 0-based) of a trajectory. */
export interface ContextSpan {
  trajectory_id: string;
  start_state: number;
  end_state: number;
}

export interface ContextRequest {
  /** What the reader should know first (markdown, at most 64 KiB). */
  note?: string;
  /** Most important first; at most 64 spans and 200 states in all. */
  spans: ContextSpan[];
  /** Default 2000; never exceeded. */
  token_budget?: number;
  /** The question: page lines holding its words are kept first. */
  query?: string;
}

export interface RenderedSpan {
  trajectory_id: string;
  start_state: number;
  end_state: number;
  states_shown: number;
  lines_cut: number;
}

export interface RenderedContext {
  context: string;
  tokens: number;
  token_budget: number;
  note_cut: boolean;
  spans: RenderedSpan[];
}

export interface InspectOptions {
  /** Default 2000. */
  token_budget?: number;
  /** Recall hits considered (default 20). */
  top_k?: number;
  /** Trajectories shortlisted (default 3). */
  trajectories?: number;
}

export interface InspectRequest extends InspectOptions {
  question: string;
}

/** Recall + inspection: the note and spans chosen, the shortlist, the rendered context. */
export interface InspectedRecall {
  note: string;
  spans: ContextSpan[];
  shortlist: string[];
  context: RenderedContext;
  recall_ms?: number;
  inspect_ms?: number;
  render_ms?: number;
  total_ms?: number;
}

export interface AgentOptions {
  /** Model calls (default 8). */
  max_steps?: number;
  /** Default 120 000, at most 600 000. */
  time_budget_ms?: number;
  token_budget?: number;
  fallback?: "recall" | "recall_inspection";
}

export interface AgentRequest extends AgentOptions {
  question: string;
}

export interface AgentStep {
  step: number;
  tool: string;
  args: unknown;
  model_ms: number;
  tool_ms: number;
  result_chars: number;
  error?: string;
}

/** The agent controller's answer: `mode` is `agent`, or `fallback` with `fallback_reason`. */
export interface AgentRun {
  mode: "agent" | "fallback";
  fallback_reason?: string;
  model?: string;
  note: string;
  spans: ContextSpan[];
  context: string;
  context_tokens: number;
  steps: AgentStep[];
  model_calls: number;
  elapsed_ms: number;
}

/** A key as listed (never its token). */
export interface KeyInfo {
  id: string;
  spaces: string[];
  read_only: boolean;
  label?: string;
  /** The end-user partition the key is pinned to, if any. */
  partition?: Partition;
  created_at: string;
  revoked_at?: string;
}

/** A key just made: its `token`, shown this once, and what `KeyInfo` lists. */
export interface NewKey extends KeyInfo {
  token: string;
}

/** The body of `createKey`. */
export interface CreateKey {
  spaces: string[];
  read_only?: boolean;
  label?: string;
  /** Pin the key to one end user: everything it reads is theirs, everything it writes is
   * tagged with it. */
  partition?: Partition;
}
