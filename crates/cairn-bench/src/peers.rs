//! The turn-level peers: simple retrieval recipes run on the same data, token budget and
//! tokenizer as Cairn's rows, in the same run (`--peers`), so the side-by-side table is
//! one command. Each peer ranks single turns (messages) of the question's space and packs
//! them whole, in rank order, into the budget of the `defaults` row, skipping a turn that
//! does not fit and going on with the next; headers are not counted, which favours the
//! peers. A turn is indexed as a reader would see it: `speaker: text` for named speakers,
//! the message text in a user/assistant chat (and so embedded exactly as Cairn embeds a
//! user turn, sharing the embedding cache).
//!
//! - `bm25`: Okapi BM25 as `rank_bm25` computes it (k1 1.5, b 0.75, a negative IDF
//!   replaced by 0.25 times the mean IDF), over lowercased alphanumeric words: the recipe
//!   of the reference baselines in the data README.
//! - `minilm`: cosine of the memory's embedding model (all-MiniLM-L6-v2) over the turns,
//!   embedded through the memory's cache (`Memory::embed`).
//! - `rrf`: reciprocal rank fusion (k = 60) of the two rankings.
use cairn::{GroupMessage, Memory, SessionInput};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A peer recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Peer {
    Bm25,
    Minilm,
    Rrf,
}

impl Peer {
    /// The config row name of the peer.
    pub fn row_name(self) -> &'static str {
        match self {
            Peer::Bm25 => "peer-bm25",
            Peer::Minilm => "peer-minilm",
            Peer::Rrf => "peer-rrf",
        }
    }
}

/// One turn of a space as the peers index it, under the dataset's ids.
#[derive(Debug, Clone)]
pub struct Doc {
    pub session: String,
    pub message: String,
    pub text: String,
}

/// The turns of sessions, as ingested.
pub fn docs_of_sessions(sessions: &[SessionInput]) -> Vec<Doc> {
    sessions
        .iter()
        .flat_map(|s| {
            s.messages.iter().map(|m| Doc {
                session: s.id.clone(),
                message: m.id.clone(),
                text: match (&m.role, &m.speaker) {
                    (None, Some(who)) => format!("{who}: {}", m.text),
                    _ => m.text.clone(),
                },
            })
        })
        .collect()
}

/// The turns of group messages (each in its group's day session).
pub fn docs_of_group_messages<'a>(
    messages: impl IntoIterator<Item = &'a GroupMessage>,
) -> Vec<Doc> {
    messages
        .into_iter()
        .map(|m| Doc {
            session: m.session_id(),
            message: m.id.clone().unwrap_or_default(),
            text: format!("{}: {}", m.speaker, m.text),
        })
        .collect()
}

/// Lowercased alphanumeric words.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Okapi BM25 over the docs of one space.
struct Bm25 {
    /// Per doc: term frequencies and length.
    docs: Vec<(HashMap<String, u32>, usize)>,
    idf: HashMap<String, f64>,
    avgdl: f64,
}

impl Bm25 {
    const K1: f64 = 1.5;
    const B: f64 = 0.75;
    const EPSILON: f64 = 0.25;

    fn new(docs: &[Doc]) -> Self {
        let mut df: HashMap<String, usize> = HashMap::new();
        let docs: Vec<(HashMap<String, u32>, usize)> = docs
            .iter()
            .map(|d| {
                let ws = words(&d.text);
                let mut tf: HashMap<String, u32> = HashMap::new();
                for w in &ws {
                    *tf.entry(w.clone()).or_default() += 1;
                }
                for w in tf.keys() {
                    *df.entry(w.clone()).or_default() += 1;
                }
                (tf, ws.len())
            })
            .collect();
        let n = docs.len() as f64;
        let avgdl = docs.iter().map(|d| d.1 as f64).sum::<f64>() / n.max(1.0);
        let mut idf: HashMap<String, f64> = df
            .into_iter()
            .map(|(w, f)| (w, ((n - f as f64 + 0.5) / (f as f64 + 0.5)).ln()))
            .collect();
        let mean = idf.values().sum::<f64>() / (idf.len().max(1) as f64);
        for v in idf.values_mut() {
            if *v < 0.0 {
                *v = Self::EPSILON * mean;
            }
        }
        Self { docs, idf, avgdl }
    }

    fn scores(&self, query: &str) -> Vec<f64> {
        let q = words(query);
        self.docs
            .iter()
            .map(|(tf, len)| {
                q.iter()
                    .map(|w| {
                        let f = f64::from(tf.get(w).copied().unwrap_or(0));
                        let idf = self.idf.get(w).copied().unwrap_or(0.0);
                        let norm = 1.0 - Self::B + Self::B * *len as f64 / self.avgdl;
                        idf * f * (Self::K1 + 1.0) / (f + Self::K1 * norm)
                    })
                    .sum()
            })
            .collect()
    }
}

/// The peers' index of one space: its turns, their BM25 index, and (once a dense peer
/// asks) their vectors.
pub struct PeerIndex {
    space: String,
    pub docs: Vec<Doc>,
    bm25: Bm25,
    vectors: Option<Vec<Vec<f32>>>,
    /// Tokens of each doc with the memory's tokenizer (counted once).
    tokens: Vec<usize>,
}

/// Doc indexes in rank order, best first (ties: earlier doc first).
fn by_score(scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
}

impl PeerIndex {
    pub fn new(memory: &Memory, space: &str, docs: Vec<Doc>) -> Self {
        let tokens = docs
            .iter()
            .map(|d| memory.embedder().count_tokens(&d.text))
            .collect();
        Self {
            space: space.into(),
            bm25: Bm25::new(&docs),
            docs,
            vectors: None,
            tokens,
        }
    }

    fn dense(&mut self, memory: &Memory, question: &str) -> Result<Vec<f64>, cairn::Error> {
        if self.vectors.is_none() {
            let texts: Vec<&str> = self.docs.iter().map(|d| d.text.as_str()).collect();
            self.vectors = Some(memory.embed(&self.space, &texts, false)?);
        }
        let q = memory
            .embed(&self.space, &[question], true)?
            .pop()
            .unwrap_or_default();
        let vectors = self.vectors.as_deref().unwrap_or_default();
        Ok(vectors.iter().map(|v| f64::from(cosine(v, &q))).collect())
    }

    /// The docs in the peer's rank order.
    pub fn rank(
        &mut self,
        memory: &Memory,
        peer: Peer,
        question: &str,
    ) -> Result<Vec<usize>, cairn::Error> {
        Ok(match peer {
            Peer::Bm25 => by_score(&self.bm25.scores(question)),
            Peer::Minilm => by_score(&self.dense(memory, question)?),
            Peer::Rrf => {
                let lexical = by_score(&self.bm25.scores(question));
                let dense = by_score(&self.dense(memory, question)?);
                let mut fused = vec![0.0f64; self.docs.len()];
                for list in [lexical, dense] {
                    for (rank, d) in list.into_iter().enumerate() {
                        fused[d] += 1.0 / (60.0 + rank as f64 + 1.0);
                    }
                }
                by_score(&fused)
            }
        })
    }

    /// The docs of `ranked` packed whole in rank order within `budget` tokens (a doc that
    /// does not fit is skipped): their places in `ranked`, and the tokens they take.
    pub fn pack(&self, ranked: &[usize], budget: usize) -> (Vec<usize>, usize) {
        let mut used = 0;
        let mut packed = Vec::new();
        for (i, &d) in ranked.iter().enumerate() {
            if used + self.tokens[d] <= budget {
                used += self.tokens[d];
                packed.push(i);
            }
            if used == budget {
                break;
            }
        }
        (packed, used)
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Doc {
        Doc {
            session: "s".into(),
            message: text.into(),
            text: text.into(),
        }
    }

    /// The scores `rank_bm25.BM25Okapi` gives this corpus and query (computed by hand
    /// from its formulas: idf of "cat" ln((3-2+0.5)/(2+0.5)) is negative, so it is
    /// 0.25 times the mean idf).
    #[test]
    fn bm25_follows_rank_bm25() {
        let docs = [
            doc("the cat sat"),
            doc("a cat ran far away"),
            doc("dogs bark"),
        ];
        let bm = Bm25::new(&docs);
        let s = bm.scores("cat dogs");
        assert!(s[2] > s[0] && s[0] > s[1], "{s:?}");
        let idf_dogs = ((3.0f64 - 1.0 + 0.5) / 1.5).ln();
        let norm = 1.0 - 0.75 + 0.75 * 2.0 / (10.0 / 3.0);
        let want = idf_dogs * 2.5 / (1.0 + 1.5 * norm);
        assert!((s[2] - want).abs() < 1e-9, "{} vs {want}", s[2]);
        assert_eq!(by_score(&s), [2, 0, 1]);
    }
}
