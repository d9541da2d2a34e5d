//! The query's side of an asymmetric embedder: recall embeds its query through this
//! view, so a model with distinct query and passage inputs (e5) gets the query form, and
//! the embedding cache keeps query vectors apart from passage vectors of the same text
//! (their model id differs). For a symmetric embedder it is the embedder itself.
use cairn_core::{EmbedError, Embedder};

pub struct QueryEmbedder<'e> {
    inner: &'e dyn Embedder,
    id: String,
}

impl<'e> QueryEmbedder<'e> {
    pub fn new(inner: &'e dyn Embedder) -> Self {
        let id = if inner.asymmetric() {
            format!("{}#query", inner.model_id())
        } else {
            inner.model_id().to_string()
        };
        Self { inner, id }
    }
}

impl Embedder for QueryEmbedder<'_> {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.inner.embed_queries(texts)
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.inner.count_tokens(text)
    }
    fn whitespace_additive(&self) -> bool {
        self.inner.whitespace_additive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Queries and passages differ in their first coordinate.
    struct Asym(bool);
    impl Embedder for Asym {
        fn model_id(&self) -> &str {
            "m"
        }
        fn dim(&self) -> usize {
            2
        }
        fn embed(&self, t: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(t.iter().map(|_| vec![0.0, 1.0]).collect())
        }
        fn embed_queries(&self, t: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(t.iter().map(|_| vec![1.0, 0.0]).collect())
        }
        fn asymmetric(&self) -> bool {
            self.0
        }
        fn count_tokens(&self, t: &str) -> usize {
            t.len()
        }
    }

    #[test]
    fn queries_take_the_query_form_and_a_cache_id_of_their_own() {
        let a = Asym(true);
        let q = QueryEmbedder::new(&a);
        assert_eq!(q.model_id(), "m#query");
        assert_eq!(q.embed(&["x"]).unwrap(), [vec![1.0, 0.0]]);
        let s = Asym(false);
        assert_eq!(QueryEmbedder::new(&s).model_id(), "m");
    }
}
