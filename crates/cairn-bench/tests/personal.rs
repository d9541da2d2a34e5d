//! The whole `cairn bench personal` path on the personal-memory suite
//! (`fixtures/personal`). Skipped, with a message, when the embedding model is not
//! installed (./scripts/setup.sh).
//!
//! The targets (precision >= .90 and recall >= .75 per category, first hit
//! current >= .90) are what the bench reports; this test holds the split extraction was
//! developed on to them per category, and every split together to the floors measured
//! when the suite was committed (docs/benchmarks/personal.md), so a change that loses
//! ground fails here.
mod common;
use cairn_bench::report::personal::{Part, Summary};
use common::{bench, model_installed};

/// `cairn bench personal --suite fixtures/personal/<file>`: its patterns row over all
/// conversations.
fn run_suite(file: &str) -> Part {
    let out = tempfile::tempdir().unwrap();
    let suite = format!("{}/fixtures/personal/{file}", env!("CARGO_MANIFEST_DIR"));
    let dir = out.path().to_str().unwrap();
    bench(&[
        "personal",
        "--suite",
        &suite,
        "--out",
        dir,
        "--run-label",
        "run",
    ])
    .unwrap();
    let json = std::fs::read_to_string(out.path().join("run/summary.json")).unwrap();
    let s: Summary = serde_json::from_str(&json).unwrap();
    s.rows["patterns"]["all"].clone()
}

#[test]
fn the_suite_runs_and_holds_its_numbers() {
    if !model_installed() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    bench(&[
        "personal",
        "--out",
        out.path().to_str().unwrap(),
        "--run-label",
        "suite",
    ])
    .unwrap();
    let dir = out.path().join("suite");
    for f in ["results.jsonl", "summary.md", "METHODOLOGY.md", "run.json"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let s: Summary =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let row = &s.rows["patterns"];
    let all = &row["all"];
    assert!(all.conversations >= 60, "{}", all.conversations);
    let dev = &row["dev"];
    for (category, e) in &dev.by_category {
        assert!(
            e.precision >= 0.90 && e.recall >= 0.75,
            "dev {category}: {e:?}"
        );
    }
    assert!(all.all.precision >= 0.93, "{:?}", all.all);
    assert!(all.all.recall >= 0.80, "{:?}", all.all);
    // .830 before issue 51; .875 with the newest statement first for a question about
    // the present (docs/benchmarks/personal.md).
    assert!(all.first_hit_current >= 0.86, "{}", all.first_hit_current);
    assert!(all.context_current >= 0.95, "{}", all.context_current);
}

/// The second suite (`fixtures/personal/dev2.txt`, issue 51), written apart from the
/// code: changes said in passing, corrections, third-person notes, questions that share
/// no word with their answer. Its extraction is far from the first suite's (that is what
/// it shows); the first hit is held to the floor measured when the newest statement
/// came first (.782; .564 before).
#[test]
fn the_second_suite_holds_its_first_hit() {
    if !model_installed() {
        return;
    }
    let all = &run_suite("dev2.txt");
    assert!(all.conversations >= 30, "{}", all.conversations);
    assert!(all.first_hit_current >= 0.76, "{}", all.first_hit_current);
    assert!(all.context_current >= 0.90, "{}", all.context_current);
}

/// The as-of suite (`fixtures/personal/asof.txt`, issue 51, by another author): a
/// question dated with `@` is recalled as of that date and must get the value of then.
/// Held to the floors measured when it was committed (first hit .719 of all 32, .688 of
/// the 16 dated; context .812 of the dated, .875 with the user's card).
#[test]
fn the_as_of_suite_asks_its_dated_questions_as_of_their_date() {
    if !model_installed() {
        return;
    }
    let all = &run_suite("asof.txt");
    assert_eq!((all.questions, all.as_of_questions), (32, 16));
    assert!(all.first_hit_current >= 0.70, "{}", all.first_hit_current);
    assert!(all.as_of_first_hit >= 0.68, "{}", all.as_of_first_hit);
    assert!(all.as_of_context >= 0.85, "{}", all.as_of_context);
}

/// The standing-instruction suite (`fixtures/personal/instructions.txt`, issue 51, by
/// another author): a later request that depends on an instruction must find the current
/// one in its context (the user's card), dated questions the one of their date. Its
/// first score (.41 of the instructions read, context .867) and the floors of the
/// grammar that followed are in docs/benchmarks/personal.md.
#[test]
fn the_instruction_suite_finds_the_current_instruction_in_the_context() {
    if !model_installed() {
        return;
    }
    let all = &run_suite("instructions.txt");
    assert_eq!((all.questions, all.as_of_questions), (45, 6));
    assert!(all.all.precision >= 0.90, "{:?}", all.all);
    assert!(all.all.recall >= 0.78, "{:?}", all.all);
    assert!(all.context_current >= 0.95, "{}", all.context_current);
    assert!(all.as_of_context >= 0.95, "{}", all.as_of_context);
}

/// `--llm` adds the `patterns+llm` row beside the patterns: each conversation's space is
/// enriched once it exists, by a scripted OpenAI-compatible stub here, and the facts it
/// read are counted. (The row once failed before its first write: enrichment was
/// switched on for a space not yet made.)
#[test]
fn the_llm_row_runs_beside_the_patterns() {
    use cairn_testkit::llm_stub::{Stub, StubReply};
    if !model_installed() {
        return;
    }
    let stub = Stub::start(|r| {
        let facts = if r.last_message().contains("I live in Porto") {
            serde_json::json!({"facts": [{"subject": "user's home", "value": "Porto"}]})
        } else {
            serde_json::json!({"facts": []})
        };
        StubReply::Chat(facts.to_string())
    });
    let out = tempfile::tempdir().unwrap();
    let suite = out.path().join("one.txt");
    std::fs::write(
        &suite,
        "=== one\n--- 2024-01-10\nU: I live in Porto, and I work as a nurse.\n  + home user: Porto\n  + role user: nurse\nA: Porto is lovely.\n? Where do I live? => Porto\n",
    )
    .unwrap();
    let llm = format!("{},stub", stub.url);
    bench(&[
        "personal",
        "--suite",
        suite.to_str().unwrap(),
        "--llm",
        &llm,
        "--out",
        out.path().to_str().unwrap(),
        "--run-label",
        "llm",
    ])
    .unwrap();
    let s: Summary = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("llm").join("summary.json")).unwrap(),
    )
    .unwrap();
    let patterns = &s.rows["patterns"]["all"];
    let with_llm = &s.rows["patterns+llm"]["all"];
    assert_eq!((patterns.conversations, with_llm.conversations), (1, 1));
    assert_eq!((patterns.llm_facts, with_llm.llm_facts), (0, 1));
    assert!(!stub.requests.lock().unwrap().is_empty());
}
