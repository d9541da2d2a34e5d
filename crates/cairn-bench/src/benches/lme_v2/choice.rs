//! A multiple-choice question answered from the evidence: each option scored against
//! what recall found (`scoring/options.rs`), shared by the recall rows and the inspection
//! rows of the LongMemEval-V2 bench.
use crate::run::memory::embed;
use crate::scoring::options::{pick, question_only, score_options, ChoiceResult, OptionScore};
use anyhow::bail;
use cairn::formats::lme_v2::{EvalKind, LmeV2Question};
use cairn::Memory;

/// Multiple choice with the option scorer; a set question picks every option whose total
/// is at least halfway between the worst and the best.
pub(crate) fn choice(
    memory: &Memory,
    q: &LmeV2Question,
    evidence: &[&str],
) -> anyhow::Result<Option<ChoiceResult>> {
    let options = q.options();
    if options.is_empty() {
        bail!("a multiple-choice question without option lines (A. ... / (A) ...)");
    }
    let stem = q.stem();
    let letters: Vec<&String> = options.keys().collect();
    let texts: Vec<&str> = options.values().map(String::as_str).collect();
    let ov = embed(memory, &texts)?;
    let ev = embed(memory, evidence)?;
    let qv = embed(memory, &[stem.as_str()])?;
    let scores = score_options(&stem, &texts, evidence, &ov, &ev);
    let gold: Vec<String> = q.eval_function.answer_letters(&q.answer);
    let q_only = question_only(&ov, &qv[0]);
    let (best, tie) = pick(&scores);
    let (q_best, _) = pick(&q_only);
    let (predicted, correct, q_correct) = if q.eval_function.kind == EvalKind::McChoiceSetMatch {
        let set = |s: &[OptionScore]| -> Vec<String> {
            let hi = s.iter().map(|x| x.total).fold(f64::MIN, f64::max);
            let lo = s.iter().map(|x| x.total).fold(f64::MAX, f64::min);
            letters
                .iter()
                .zip(s)
                .filter(|(_, x)| x.total >= (hi + lo) / 2.0)
                .map(|(l, _)| (*l).clone())
                .collect()
        };
        let mut g = gold.clone();
        g.sort();
        let p = set(&scores);
        let qo = set(&q_only);
        (p.join(","), p == g, qo == g)
    } else {
        let p = letters[best].clone();
        let ok = gold.len() == 1 && gold[0] == p;
        (p, ok, gold.len() == 1 && gold[0] == *letters[q_best])
    };
    Ok(Some(ChoiceResult {
        predicted,
        correct,
        tie,
        scores: letters.iter().map(|l| (*l).clone()).zip(scores).collect(),
        question_only_predicted: letters[q_best].clone(),
        question_only_correct: q_correct,
    }))
}
