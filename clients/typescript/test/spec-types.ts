// Compiled (not run) by scripts/check-spec.mjs against types generated from openapi.json.
// Every schema of the spec must have a type in src/types.ts listed in `Ours`, with every
// property of the schema, of a compatible type (nullability aside: the spec does not say
// which fields may be null). A failure names the schema and the property.
import type { components } from "../generated/openapi.js";
import type * as T from "../src/types.js";

type S = components["schemas"];

type Deep<X> = X extends (infer U)[]
  ? Deep<U>[]
  : X extends object
    ? { [K in keyof X]: Deep<NonNullable<X[K]>> }
    : NonNullable<X>;

type Fit<Mine, Spec> = {
  [K in keyof Spec]-?: K extends keyof Mine
    ? Deep<NonNullable<Mine[K]>> extends Deep<NonNullable<Spec[K]>>
      ? true
      : { property_type_differs: K }
    : { property_missing: K };
}[keyof Spec];

/** One entry per schema of the spec: a new schema fails here until it has a type. */
type Ours = {
  Problem: T.Problem;
  Message: T.Message;
  SessionInput: T.SessionInput;
  SessionRecord: T.SessionRecord;
  AddMessages: T.AddMessages;
  IngestReport: T.IngestReport;
  Filter: T.Filter;
  RecallRequest: T.RecallRequest;
  Hit: T.Hit;
  HitPart: T.HitPart;
  Recall: T.Recall;
  CardLine: T.CardLine;
  Warning: T.Warning;
  Unit: T.Unit;
  SpaceStats: T.SpaceStats;
  SpaceCreated: T.SpaceCreated;
  Removed: T.Removed;
  SessionPage: T.SessionPage;
  UnitPage: T.UnitPage;
  GroupMessage: T.GroupMessage;
  AgentState: T.AgentState;
  TrajectoryInput: T.TrajectoryInput;
  TrajectoryRecord: T.TrajectoryRecord;
  TrajectorySummary: T.TrajectorySummary;
  FactVersion: T.FactVersion;
  FactHistory: T.FactHistory;
  Evidence: T.Evidence;
  SpeakerProfile: T.SpeakerProfile;
  ProfileFact: T.ProfileFact;
  ForgotMemory: T.ForgotMemory;
  ForgotMessages: T.ForgotMessages;
  ForgotPartition: T.ForgotPartition;
  ForgetPartition: T.ForgetPartition;
  ListScore: T.ListScore;
  HitExplanation: T.HitExplanation;
  RecallExplanation: T.RecallExplanation;
  Me: T.Me;
  KeyInfo: T.KeyInfo;
  NewKey: T.NewKey;
  CreateKey: T.CreateKey;
  FactSubject: T.FactSubject;
  EntitySummary: T.EntitySummary;
  EntityMention: T.EntityMention;
  EntityRelation: T.EntityRelation;
  TimelineEntry: T.TimelineEntry;
  EntityDetail: T.EntityDetail;
  StepLine: T.StepLine;
  ManifestEntry: T.ManifestEntry;
  Manifest: T.Manifest;
  TrajectoryOverview: T.TrajectoryOverview;
  StateView: T.StateView;
  SpanView: T.SpanView;
  MatchLine: T.MatchLine;
  StateMatch: T.StateMatch;
  Matches: T.Matches;
  ContextSpan: T.ContextSpan;
  ContextRequest: T.ContextRequest;
  RenderedSpan: T.RenderedSpan;
  RenderedContext: T.RenderedContext;
  InspectRequest: T.InspectRequest;
  InspectedRecall: T.InspectedRecall;
  AgentRequest: T.AgentRequest;
  AgentStep: T.AgentStep;
  AgentRun: T.AgentRun;
};

type Checks = {
  [K in keyof S]: K extends keyof Ours
    ? [Fit<Ours[K], S[K]>] extends [true] | [never] ? true : Fit<Ours[K], S[K]>
    : { schema_without_a_type: K };
};

type Failures = { [K in keyof Checks as Checks[K] extends true ? never : K]: Checks[K] };

// Compiles only when there are no failures (each one is a required property of `Failures`).
export const failures: Failures = {};
