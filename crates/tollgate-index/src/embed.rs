//! Embedders turn chunk text into vectors for the vector channel: [`HashedEmbedder`], the
//! offline default needing no model, and [`HttpEmbedder`] for OpenAI-compatible
//! `/v1/embeddings` endpoints (Ollama, TEI, vLLM, OpenAI). An index remembers its embedder's
//! [`Embedder::id`]; a different one means a clear rebuild, never mixed vectors.

use std::fmt;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::IndexError;
use crate::hash::{HashKeyMap, fnv1a};
use crate::tokenize::for_each_token;

/// Something that maps texts to L2-normalised vectors of a fixed dimension.
pub trait Embedder: Send + Sync + fmt::Debug {
    /// Names the model and dimension; stored in the index header.
    fn id(&self) -> String;
    fn dim(&self) -> usize;
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError>;
}

/// Dimension of the hashed embedder.
pub const HASHED_DIM: usize = 512;

/// Feature hashing of identifier words, their sub-tokens and the character 3-grams of each
/// sub-token, weighted `1 + ln tf`, signed into [`HASHED_DIM`] buckets, L2-normalised.
#[derive(Debug, Clone, Default)]
pub struct HashedEmbedder;

impl HashedEmbedder {
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        Self::embed_with(text, &mut Scratch::default())
    }

    /// Embeds `text` with `scratch`'s tables (emptied first), so a batch reuses them.
    fn embed_with(text: &str, scratch: &mut Scratch) -> Vec<f32> {
        scratch.clear();
        // Distinct tokens with their counts first: identifiers repeat within a chunk, and each
        // distinct one's 3-grams are then added once, weighted by its count (the same sums).
        for_each_token(text, |token, _, _| {
            let hash = fnv1a(token.as_bytes());
            let index = *scratch.token_index.entry(hash).or_insert_with(|| {
                let start = scratch.arena.len();
                scratch.arena.push_str(token);
                scratch
                    .distinct
                    .push((start, scratch.arena.len(), hash, 0.0));
                scratch.distinct.len() - 1
            });
            scratch.distinct[index].3 += 1.0;
        });
        let features = &mut scratch.features;
        let mut padded: Vec<u8> = Vec::with_capacity(80);
        for &(start, end, hash, count) in &scratch.distinct {
            *features.entry(hash).or_default() += count;
            // Character 3-grams bridge spelling variants (`parse`/`parser`/`parsing`).
            padded.clear();
            padded.push(b'^');
            padded.extend_from_slice(&scratch.arena.as_bytes()[start..end]);
            padded.push(b'$');
            if padded.len() > 3 {
                for gram in padded.windows(3) {
                    *features
                        .entry(fnv1a(&[0xff, gram[0], gram[1], gram[2]]))
                        .or_default() += 0.5 * count;
                }
            }
        }
        let mut v = vec![0f32; HASHED_DIM];
        for (&hash, &tf) in features.iter() {
            let bucket = (hash % HASHED_DIM as u64) as usize;
            let sign = if (hash >> 63) == 0 { 1.0 } else { -1.0 };
            v[bucket] += sign * weight(tf);
        }
        normalise(&mut v);
        v
    }
}

/// `1 + ln tf`. A feature's tf is a multiple of ½ (token counts, and ½ × counts for 3-grams)
/// and mostly small: those come from a table of the same values, where a libm call per feature
/// was a sixtieth of a cold index.
fn weight(tf: f32) -> f32 {
    static TABLE: std::sync::LazyLock<[f32; 256]> =
        std::sync::LazyLock::new(|| std::array::from_fn(|twice| 1.0 + (twice as f32 * 0.5).ln()));
    let twice = tf * 2.0;
    let index = twice as usize;
    if index as f32 == twice
        && let Some(&w) = TABLE.get(index)
    {
        return w;
    }
    1.0 + tf.ln()
}

/// Tables of one embedding, kept across a batch.
#[derive(Debug, Default)]
struct Scratch {
    /// Token hash → index in `distinct`.
    token_index: HashKeyMap<usize>,
    /// Per distinct token: its byte range in `arena`, its hash and its count.
    distinct: Vec<(usize, usize, u64, f32)>,
    arena: String,
    /// Feature hash → weighted count.
    features: HashKeyMap<f32>,
}

impl Scratch {
    fn clear(&mut self) {
        self.token_index.clear();
        self.distinct.clear();
        self.arena.clear();
        self.features.clear();
    }
}

impl Embedder for HashedEmbedder {
    fn id(&self) -> String {
        format!("hashed-v1/{HASHED_DIM}")
    }

    fn dim(&self) -> usize {
        HASHED_DIM
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        let mut scratch = Scratch::default();
        Ok(texts
            .iter()
            .map(|text| Self::embed_with(text, &mut scratch))
            .collect())
    }
}

pub(crate) fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Texts per request to an embedding endpoint.
const HTTP_BATCH: usize = 64;
/// Characters of a chunk sent to a model (models truncate beyond a few hundred tokens anyway).
const HTTP_MAX_CHARS: usize = 2000;

/// An OpenAI-compatible `POST {base_url}/embeddings` client.
pub struct HttpEmbedder {
    base_url: String,
    model: String,
    api_key: Option<String>,
    dim: usize,
    client: reqwest::blocking::Client,
}

impl fmt::Debug for HttpEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The key never reaches a log.
        f.debug_struct("HttpEmbedder")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("dim", &self.dim)
            .finish()
    }
}

impl HttpEmbedder {
    /// Connects to `base_url` (e.g. `http://localhost:11434/v1`) and probes the dimension with
    /// one request, so a wrong URL or model fails here, before any indexing.
    pub fn connect(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
    ) -> Result<HttpEmbedder, IndexError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|err| IndexError::Embedder(format!("cannot build the HTTP client: {err}")))?;
        let mut embedder = HttpEmbedder {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key,
            dim: 0,
            client,
        };
        let probe = embedder.request(&["dimension probe"])?;
        embedder.dim = probe.first().map_or(0, Vec::len);
        if embedder.dim == 0 {
            return Err(IndexError::Embedder(format!(
                "{}/embeddings returned an empty vector for model `{model}`",
                embedder.base_url
            )));
        }
        Ok(embedder)
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        let url = format!("{}/embeddings", self.base_url);
        let input: Vec<String> = texts
            .iter()
            .map(|t| t.chars().take(HTTP_MAX_CHARS).collect())
            .collect();
        let body = serde_json::json!({ "model": self.model, "input": input });
        let mut request = self
            .client
            .post(&url)
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let fail = |what: String| IndexError::Embedder(format!("{url}: {what}"));
        let response = request.send().map_err(|err| fail(err.to_string()))?;
        let status = response.status();
        let text = response.text().map_err(|err| fail(err.to_string()))?;
        if !status.is_success() {
            let excerpt: String = text.chars().take(300).collect();
            return Err(fail(format!("HTTP {status}: {excerpt}")));
        }
        #[derive(serde::Deserialize)]
        struct Item {
            embedding: Vec<f32>,
            #[serde(default)]
            index: Option<usize>,
        }
        #[derive(serde::Deserialize)]
        struct Response {
            data: Vec<Item>,
        }
        let parsed: Response = serde_json::from_str(&text)
            .map_err(|err| fail(format!("not an embeddings response: {err}")))?;
        if parsed.data.len() != texts.len() {
            return Err(fail(format!(
                "asked for {} embeddings, got {}",
                texts.len(),
                parsed.data.len()
            )));
        }
        let mut items = parsed.data;
        if items.iter().all(|item| item.index.is_some()) {
            items.sort_by_key(|item| item.index);
        }
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let mut v = item.embedding;
            if self.dim != 0 && v.len() != self.dim {
                return Err(fail(format!(
                    "vector of dimension {} where {} was expected",
                    v.len(),
                    self.dim
                )));
            }
            normalise(&mut v);
            out.push(v);
        }
        Ok(out)
    }
}

impl Embedder for HttpEmbedder {
    fn id(&self) -> String {
        // The URL is part of the identity: two servers may serve different weights under one name.
        let mut hasher = Sha256::new();
        hasher.update(self.base_url.as_bytes());
        let digest = hasher.finalize();
        let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        format!("http/{}/{}@{short}", self.model, self.dim)
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(HTTP_BATCH) {
            out.extend(self.request(batch)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn hashed_vectors_are_normalised_and_similar_for_shared_identifiers() {
        let e = HashedEmbedder;
        let a = e.embed_one("fn parse_config(path: &Path) -> Config");
        let b = e.embed_one("parsing the configuration file");
        let c = e.embed_one("render a triangle with opengl shaders");
        assert!((cosine(&a, &a) - 1.0).abs() < 1e-4);
        assert!(
            cosine(&a, &b) > cosine(&a, &c) + 0.05,
            "{} vs {}",
            cosine(&a, &b),
            cosine(&a, &c)
        );
        assert_eq!(a.len(), HASHED_DIM);
    }

    #[test]
    fn counting_distinct_tokens_first_gives_the_per_occurrence_vector() {
        // The definition, one occurrence at a time.
        let reference = |text: &str| {
            let mut counts: std::collections::HashMap<u64, f32> = Default::default();
            for_each_token(text, |token, _, _| {
                *counts.entry(fnv1a(token.as_bytes())).or_default() += 1.0;
                let padded = format!("^{token}$");
                if padded.len() > 3 {
                    for gram in padded.as_bytes().windows(3) {
                        *counts
                            .entry(fnv1a(&[0xff, gram[0], gram[1], gram[2]]))
                            .or_default() += 0.5;
                    }
                }
            });
            let mut v = vec![0f32; HASHED_DIM];
            for (hash, tf) in counts {
                let sign = if (hash >> 63) == 0 { 1.0 } else { -1.0 };
                v[(hash % HASHED_DIM as u64) as usize] += sign * (1.0 + tf.ln());
            }
            normalise(&mut v);
            v
        };
        let texts = [
            "fn parse_config(config: &Config) -> Config { parse(config.path); parse(config) }",
            "parserParser PARSER parser_2 x x x é élan Élan",
            "",
        ];
        let batch = HashedEmbedder.embed(&texts).unwrap();
        for (text, got) in texts.iter().zip(&batch) {
            let want = reference(text);
            let diff = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(diff < 1e-6, "{text:?}: differs by {diff}");
        }
    }

    #[test]
    fn the_weight_table_holds_the_computed_weights() {
        for twice in 1..600u32 {
            let tf = twice as f32 * 0.5;
            assert_eq!(weight(tf).to_bits(), (1.0 + tf.ln()).to_bits(), "{tf}");
        }
        for tf in [0.3f32, 1.25, 7.1, 1e6] {
            assert_eq!(weight(tf).to_bits(), (1.0 + tf.ln()).to_bits(), "{tf}");
        }
    }
}
