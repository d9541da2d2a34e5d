//! Scoring: pure functions from what a recall returned (and what the dataset says is
//! right) to numbers. No I/O, no memory, no LLM calls: every definition here is written
//! out in the METHODOLOGY.md of the runs that use it.
//!
//! - [`retrieval`]: relevance of ranked hits at session and turn level, recall@k,
//!   coverage, NDCG, MRR, evidence in context, and their means (LongMemEval, LoCoMo,
//!   FriendsQA);
//! - [`options`]: the LLM-free option scorer for multiple-choice questions and the
//!   open-ended "answer words in context" diagnostic (EverMemBench, LongMemEval-V2);
//! - [`phrases`]: the reference's phrase-set match applied to the context (LongMemEval-V2);
//! - [`qa`]: reader and judge prompts, verdicts and token F1 of the QA rows;
//! - [`exclusion`]: why a question is left out of the aggregates;
//! - [`personal`]: extracted personal facts against the suite's, and a first hit against
//!   a question's current value (the personal-memory suite).
pub mod exclusion;
pub mod options;
pub mod personal;
pub mod phrases;
pub mod qa;
pub mod retrieval;
