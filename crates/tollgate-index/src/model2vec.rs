//! Static embedding models in the model2vec format: a directory with `model.safetensors` (one
//! `[vocabulary, dimension]` matrix, f32 or f16, named `embeddings`), the tokenizer that maps
//! text to its rows (`tokenizer.json`, Hugging Face's format) and `config.json` (whether the mean
//! is normalised). A text's vector is the mean of its tokens' rows: no network, no GPU, a few
//! microseconds per chunk, which is why code-search tools ship such models.

use std::fmt;
use std::path::{Path, PathBuf};

use safetensors::{Dtype, SafeTensors};
use sha2::{Digest, Sha256};
use tokenizers::Tokenizer;

use crate::embed::{Embedder, normalise};
use crate::error::IndexError;

/// Larger files are refused before they are read (published code models are 30–130 MB).
const MAX_MODEL_BYTES: u64 = 2 * 1024 * 1024 * 1024;
const MAX_TOKENIZER_BYTES: u64 = 64 * 1024 * 1024;
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// Widest vector accepted.
const MAX_DIM: usize = 8192;
/// Tokens of one text that count: the rest of a long chunk adds little to a mean.
const MAX_TOKENS: usize = 512;

/// A model2vec model loaded from its directory.
pub struct Model2VecEmbedder {
    dir: PathBuf,
    tokenizer: Tokenizer,
    /// Row-major `[vocab, dim]`.
    matrix: Vec<f32>,
    vocab: usize,
    dim: usize,
    /// Names the model by its content: another model (or another version) is another id.
    digest: String,
}

impl fmt::Debug for Model2VecEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model2VecEmbedder")
            .field("dir", &self.dir)
            .field("vocab", &self.vocab)
            .field("dim", &self.dim)
            .finish()
    }
}

impl Model2VecEmbedder {
    /// Loads the model in `dir`; every problem is an error naming the file and what is wrong.
    pub fn load(dir: &Path) -> Result<Model2VecEmbedder, IndexError> {
        let bad = |file: &str, what: String| {
            IndexError::Embedder(format!("model2vec model {}: {file}: {what}", dir.display()))
        };
        let read = |file: &str, max: u64| -> Result<Vec<u8>, IndexError> {
            let path = dir.join(file);
            let meta = std::fs::metadata(&path).map_err(|err| bad(file, err.to_string()))?;
            if !meta.is_file() || meta.len() > max {
                return Err(bad(
                    file,
                    format!("not a regular file of at most {max} bytes"),
                ));
            }
            std::fs::read(&path).map_err(|err| bad(file, err.to_string()))
        };
        // The model's settings; its `normalize` is moot here: the index compares by cosine, so
        // every vector is made unit length. A broken file is still an error.
        if dir.join("config.json").exists() {
            serde_json::from_slice::<serde_json::Value>(&read("config.json", MAX_CONFIG_BYTES)?)
                .map_err(|err| bad("config.json", err.to_string()))?;
        }
        let tokenizer_bytes = read("tokenizer.json", MAX_TOKENIZER_BYTES)?;
        let tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|err| bad("tokenizer.json", err.to_string()))?;
        let model_bytes = read("model.safetensors", MAX_MODEL_BYTES)?;
        let tensors = SafeTensors::deserialize(&model_bytes)
            .map_err(|err| bad("model.safetensors", err.to_string()))?;
        let names = tensors.names();
        let name = if names.contains(&"embeddings") {
            "embeddings".to_string()
        } else if names.len() == 1 {
            names[0].to_string()
        } else {
            return Err(bad(
                "model.safetensors",
                format!("no `embeddings` tensor among {names:?}"),
            ));
        };
        let tensor = tensors
            .tensor(&name)
            .map_err(|err| bad("model.safetensors", err.to_string()))?;
        let [vocab, dim] = tensor.shape() else {
            return Err(bad(
                "model.safetensors",
                format!(
                    "`{name}` has shape {:?}, not [vocabulary, dimension]",
                    tensor.shape()
                ),
            ));
        };
        let (vocab, dim) = (*vocab, *dim);
        if dim == 0 || dim > MAX_DIM || vocab == 0 {
            return Err(bad(
                "model.safetensors",
                format!("a {vocab}×{dim} matrix is no embedding table (dimension 1–{MAX_DIM})"),
            ));
        }
        let matrix = match tensor.dtype() {
            Dtype::F32 => tensor
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect::<Vec<f32>>(),
            Dtype::F16 => tensor
                .data()
                .chunks_exact(2)
                .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            other => {
                return Err(bad(
                    "model.safetensors",
                    format!("`{name}` is {other:?}; f32 and f16 models are read"),
                ));
            }
        };
        if matrix.len() != vocab * dim {
            return Err(bad(
                "model.safetensors",
                "truncated tensor data".to_string(),
            ));
        }
        let digest = Sha256::digest(&model_bytes)
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Model2VecEmbedder {
            dir: dir.to_path_buf(),
            tokenizer,
            matrix,
            vocab,
            dim,
            digest,
        })
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, IndexError> {
        let encoding = self
            .tokenizer
            .encode(text, false)
            .map_err(|err| IndexError::Embedder(format!("model2vec tokenizer: {err}")))?;
        let mut sum = vec![0f32; self.dim];
        let mut n = 0usize;
        for &id in encoding.get_ids().iter().take(MAX_TOKENS) {
            let id = id as usize;
            if id >= self.vocab {
                continue;
            }
            let row = &self.matrix[id * self.dim..(id + 1) * self.dim];
            for (acc, value) in sum.iter_mut().zip(row) {
                *acc += value;
            }
            n += 1;
        }
        if n > 0 {
            for value in &mut sum {
                *value /= n as f32;
            }
        }
        normalise(&mut sum);
        Ok(sum)
    }
}

impl Embedder for Model2VecEmbedder {
    fn id(&self) -> String {
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("model2vec/{name}/{}@{}", self.dim, self.digest)
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        texts.iter().map(|text| self.embed_one(text)).collect()
    }
}

/// IEEE 754 half to single precision.
fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x3ff);
    let value = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: normalise the mantissa.
            let mut e = 127 - 15 + 1;
            let mut m = mantissa;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | (e << 23) | ((m & 0x3ff) << 13)
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000,
        _ => sign | ((exponent + 127 - 15) << 23) | (mantissa << 13),
    };
    f32::from_bits(value)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A model of the real format, made here: a word-level tokenizer over `words` (and
    /// `[UNK]`), one row per word.
    pub(crate) fn tiny_model(dir: &Path, rows: &[(&str, Vec<f32>)], dtype: Dtype) {
        let dim = rows[0].1.len();
        let mut vocab = serde_json::Map::new();
        vocab.insert("[UNK]".into(), 0.into());
        for (i, (word, _)) in rows.iter().enumerate() {
            vocab.insert((*word).into(), (i + 1).into());
        }
        let tokenizer = serde_json::json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": [],
            "normalizer": {"type": "Lowercase"},
            "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": null,
            "decoder": null,
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
        });
        std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
        let mut values = vec![0f32; dim]; // [UNK] is the zero row
        for (_, row) in rows {
            values.extend_from_slice(row);
        }
        let data: Vec<u8> = match dtype {
            Dtype::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            Dtype::F16 => values
                .iter()
                .flat_map(|v| f32_to_f16_for_tests(*v).to_le_bytes())
                .collect(),
            _ => unreachable!(),
        };
        let view =
            safetensors::tensor::TensorView::new(dtype, vec![rows.len() + 1, dim], &data).unwrap();
        let mut tensors = HashMap::new();
        tensors.insert("embeddings".to_string(), view);
        let bytes = safetensors::serialize(&tensors, None).unwrap();
        std::fs::write(dir.join("model.safetensors"), bytes).unwrap();
        std::fs::write(dir.join("config.json"), r#"{"normalize": true}"#).unwrap();
    }

    /// Exact for the values the tests use (small integers and halves).
    fn f32_to_f16_for_tests(v: f32) -> u16 {
        if v == 0.0 {
            return 0;
        }
        let bits = v.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exponent = ((bits >> 23) & 0xff) as i32 - 127 + 15;
        let mantissa = ((bits >> 13) & 0x3ff) as u16;
        sign | ((exponent as u16) << 10) | mantissa
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5)
    }

    #[test]
    fn a_text_is_the_normalised_mean_of_its_tokens_rows() {
        for dtype in [Dtype::F32, Dtype::F16] {
            let dir = tempfile::tempdir().unwrap();
            tiny_model(
                dir.path(),
                &[
                    ("parse", vec![1.0, 0.0, 0.0, 0.0]),
                    ("config", vec![0.0, 1.0, 0.0, 0.0]),
                    ("retry", vec![0.0, 0.0, 2.0, 0.0]),
                ],
                dtype,
            );
            let model = Model2VecEmbedder::load(dir.path()).unwrap();
            assert_eq!(model.dim(), 4);
            let vectors = model
                .embed(&["Parse config", "retry", "nothing known here"])
                .unwrap();
            let half = std::f32::consts::FRAC_1_SQRT_2;
            assert!(
                close(&vectors[0], &[half, half, 0.0, 0.0]),
                "{:?}",
                vectors[0]
            );
            assert!(
                close(&vectors[1], &[0.0, 0.0, 1.0, 0.0]),
                "{:?}",
                vectors[1]
            );
            // Only unknown words: the zero row, which stays zero.
            assert!(vectors[2].iter().all(|v| *v == 0.0), "{:?}", vectors[2]);
            // The id names the model by its content.
            let id = model.id();
            assert!(id.starts_with("model2vec/") && id.contains("/4@"), "{id}");
            assert_eq!(Model2VecEmbedder::load(dir.path()).unwrap().id(), id);
        }
    }

    #[test]
    fn broken_models_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = Model2VecEmbedder::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("tokenizer.json"), "{err}");
        tiny_model(dir.path(), &[("a", vec![1.0, 2.0])], Dtype::F32);
        std::fs::write(dir.path().join("model.safetensors"), b"not a tensor file").unwrap();
        let err = Model2VecEmbedder::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("model.safetensors"), "{err}");
        tiny_model(dir.path(), &[("a", vec![1.0, 2.0])], Dtype::F32);
        std::fs::write(dir.path().join("tokenizer.json"), b"{").unwrap();
        let err = Model2VecEmbedder::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("tokenizer.json"), "{err}");
    }

    #[test]
    fn half_precision_decodes_exactly() {
        for v in [0.0f32, 1.0, -2.0, 0.5, 65504.0, 6.1035156e-5] {
            assert_eq!(f16_to_f32(f32_to_f16_for_tests(v)), v, "{v}");
        }
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert_eq!(f16_to_f32(0x0001), 5.9604645e-8);
    }
}
