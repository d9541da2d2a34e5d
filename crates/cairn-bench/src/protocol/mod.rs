//! Protocols: how a dataset is fed to a memory and questioned, and how one recall
//! becomes a record. [`retrieval`] is the protocol of the benches scored by retrieval
//! metrics (LongMemEval, LoCoMo, FriendsQA): spaces ingested, each question recalled
//! once per config row, resumable question by question. EverMemBench, LongMemEval-V2 and
//! the scale benches have protocols of their own, in their bench files.
pub mod ids;
pub mod retrieval;
