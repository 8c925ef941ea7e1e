//! The lexical channel: tantivy BM25 over chunks with the code tokenizer, path and symbol
//! fields boosted. Queries are built from tokens, never parsed as query syntax, and are OR of
//! all terms, so a long natural-language question still matches.

use std::path::Path;
use std::sync::Arc;

use tantivy::collector::{FilterCollector, TopDocs};
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, IndexRecordOption, NumericOptions, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::store::Compressor;
use tantivy::{
    DocAddress, DocSet, Index, IndexReader, IndexSettings, IndexWriter, ReloadPolicy, TERMINATED,
    TantivyDocument, Term,
};

use crate::error::IndexError;
use crate::hash::HashKeySet;
use crate::store::file_key;
use crate::tokenize::{CODE_TOKENIZER, CodeTokenizer, tokens};

/// Boosts: a query word in a file's path or a definition's name says more than one in a body.
const PATH_BOOST: f32 = 3.0;
const SYMBOL_BOOST: f32 = 4.0;

/// Below this much changed source, an update is indexed with a small writer.
const SMALL_UPDATE_BYTES: u64 = 2 * 1024 * 1024;

/// The fast field holding each chunk's [`file_key`].
const FILE_KEY_FIELD: &str = "file_key";

/// The files a filtered search may return, as [`file_key`]s: a filter checks a chunk's key in
/// this set while collecting, where a term set of paths cost an FST build per query.
pub(crate) type AllowedKeys = Arc<HashKeySet>;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    pub key: Field,
    pub path_text: Field,
    pub symbol_text: Field,
    pub body: Field,
    pub chunk_id: Field,
    pub start_line: Field,
    pub end_line: Field,
    pub language: Field,
    pub kind: Field,
    pub symbol: Field,
    pub file_key: Field,
    pub generated: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(CODE_TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        key: builder.add_text_field("path", STRING | STORED),
        path_text: builder.add_text_field("path_text", text.clone()),
        symbol_text: builder.add_text_field("symbol_text", text.clone()),
        body: builder.add_text_field("body", text),
        chunk_id: builder.add_u64_field(
            "chunk_id",
            NumericOptions::default().set_indexed().set_stored(),
        ),
        start_line: builder.add_u64_field("start_line", STORED),
        end_line: builder.add_u64_field("end_line", STORED),
        language: builder.add_text_field("language", STORED),
        kind: builder.add_text_field("kind", STORED),
        symbol: builder.add_text_field("symbol", STORED),
        // Last: an index of an older format keeps the ids of the fields before it.
        file_key: builder.add_u64_field(FILE_KEY_FIELD, FAST),
        generated: builder.add_u64_field("generated", STORED),
    };
    (builder.build(), fields)
}

/// A chunk as the lexical index stores it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredChunk {
    pub path: String,
    pub chunk_id: u64,
    pub start_line: usize,
    pub end_line: usize,
    pub language: String,
    pub kind: String,
    pub symbol: Option<String>,
    /// The file announced itself as generated (ranked lower, still found).
    pub generated: bool,
    /// Where a search found it (`None` when built for writing).
    pub address: Option<DocAddress>,
}

#[derive(Debug)]
pub(crate) struct Lexical {
    index: Index,
    fields: Fields,
}

/// The chunk-level text index.
impl Lexical {
    pub(crate) fn open_or_create(dir: &Path) -> Result<Lexical, IndexError> {
        std::fs::create_dir_all(dir).map_err(|err| IndexError::io(dir, err))?;
        let (schema, fields) = schema();
        let directory =
            MmapDirectory::open(dir).map_err(|err| IndexError::Engine(err.to_string()))?;
        // The doc store uncompressed: every query reads the stored fields of its top chunks,
        // and decompressing their blocks was a twentieth of a warm search (a new index only:
        // an existing one keeps the settings it was created with).
        let settings = IndexSettings {
            docstore_compression: Compressor::None,
            ..IndexSettings::default()
        };
        let index = Index::builder()
            .schema(schema)
            .settings(settings)
            .open_or_create(directory)?;
        index.tokenizers().register(CODE_TOKENIZER, CodeTokenizer);
        Ok(Lexical { index, fields })
    }

    /// Opens an existing index for reading; `None` when there is none.
    pub(crate) fn open(dir: &Path) -> Result<Option<Lexical>, IndexError> {
        if !dir.join("meta.json").exists() {
            return Ok(None);
        }
        let index = Index::open_in_dir(dir)?;
        index.tokenizers().register(CODE_TOKENIZER, CodeTokenizer);
        let (_, fields) = schema();
        Ok(Some(Lexical { index, fields }))
    }

    pub(crate) fn fields(&self) -> Fields {
        self.fields
    }

    /// A writer sized for `source_bytes` of changed files: a few files get one thread and
    /// tantivy's smallest arena (allocating the large ones costs more than indexing them).
    pub(crate) fn writer(&self, source_bytes: u64) -> Result<IndexWriter, IndexError> {
        if source_bytes < SMALL_UPDATE_BYTES {
            return Ok(self.index.writer_with_num_threads(1, 15_000_000)?);
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4);
        Ok(self
            .index
            .writer_with_num_threads(threads, 50_000_000 * threads)?)
    }

    /// The first chunk id the last commit left free (its payload; 0 before the first).
    pub(crate) fn committed_next_id(&self) -> Result<u64, IndexError> {
        Ok(self
            .index
            .load_metas()?
            .payload
            .and_then(|payload| payload.parse().ok())
            .unwrap_or(0))
    }

    /// Live chunks in the last commit, from its metadata alone (no segment is opened).
    pub(crate) fn committed_docs(&self) -> Result<u64, IndexError> {
        Ok(self
            .index
            .searchable_segment_metas()?
            .iter()
            .map(|meta| u64::from(meta.num_docs()))
            .sum())
    }

    pub(crate) fn reader(&self) -> Result<Searcher, IndexError> {
        let reader: IndexReader = self
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Searcher {
            searcher: reader.searcher(),
            fields: self.fields,
        })
    }
}

pub(crate) fn document(
    fields: &Fields,
    path: &str,
    chunk: &StoredChunk,
    text: &str,
) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    doc.add_text(fields.key, path);
    doc.add_text(fields.path_text, path);
    if let Some(symbol) = &chunk.symbol {
        doc.add_text(fields.symbol_text, symbol);
        doc.add_text(fields.symbol, symbol);
    }
    doc.add_text(fields.body, text);
    doc.add_u64(fields.chunk_id, chunk.chunk_id);
    doc.add_u64(fields.start_line, chunk.start_line as u64);
    doc.add_u64(fields.end_line, chunk.end_line as u64);
    doc.add_text(fields.language, &chunk.language);
    doc.add_text(fields.kind, &chunk.kind);
    doc.add_u64(fields.file_key, file_key(path));
    doc.add_u64(fields.generated, u64::from(chunk.generated));
    doc
}

pub(crate) fn path_term(fields: &Fields, path: &str) -> Term {
    Term::from_field_text(fields.key, path)
}

/// A point-in-time view for queries.
pub(crate) struct Searcher {
    searcher: tantivy::Searcher,
    fields: Fields,
}

impl std::fmt::Debug for Searcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Searcher")
            .field("docs", &self.searcher.num_docs())
            .finish()
    }
}

impl Searcher {
    pub(crate) fn num_docs(&self) -> u64 {
        self.searcher.num_docs()
    }

    /// BM25 top-`k` chunks for `text`, restricted to `allowed` files when given (the filter
    /// runs while collecting, so it applies before the cut).
    pub(crate) fn search(
        &self,
        text: &str,
        k: usize,
        allowed: Option<&AllowedKeys>,
    ) -> Result<Vec<(f32, StoredChunk)>, IndexError> {
        let mut words = tokens(text);
        words.sort();
        words.dedup();
        if words.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for word in &words {
            for (field, boost) in [
                (f.body, 1.0),
                (f.path_text, PATH_BOOST),
                (f.symbol_text, SYMBOL_BOOST),
            ] {
                let term = TermQuery::new(
                    Term::from_field_text(field, word),
                    IndexRecordOption::WithFreqs,
                );
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(term), boost)),
                ));
            }
        }
        let query = BooleanQuery::new(should);
        self.top(&query, k, allowed)
    }

    /// The top-`k` chunks for `query` among the `allowed` files (checked while collecting, so
    /// before the cut).
    fn top(
        &self,
        query: &dyn Query,
        k: usize,
        allowed: Option<&AllowedKeys>,
    ) -> Result<Vec<(f32, StoredChunk)>, IndexError> {
        let top_docs = TopDocs::with_limit(k).order_by_score();
        let top = match allowed {
            Some(keys) if keys.is_empty() => return Ok(Vec::new()),
            Some(keys) => {
                let keys = Arc::clone(keys);
                let filtered = FilterCollector::new(
                    FILE_KEY_FIELD.to_string(),
                    move |key: u64| keys.contains(&key),
                    top_docs,
                );
                self.searcher.search(query, &filtered)?
            }
            None => self.searcher.search(query, &top_docs)?,
        };
        self.load(top)
    }

    fn load(&self, top: Vec<(f32, DocAddress)>) -> Result<Vec<(f32, StoredChunk)>, IndexError> {
        let mut out = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = self.searcher.doc(address)?;
            let mut chunk = self.stored(&doc);
            chunk.address = Some(address);
            out.push((score, chunk));
        }
        Ok(out)
    }

    /// For each chunk, the share of the query's information it holds: the IDF-weighted fraction
    /// of `words` found in its body, path or symbol. Absolute (a chunk holding every word
    /// scores 1, whatever else ranks), so a query nothing answers scores low; a word no chunk
    /// holds weighs the most.
    pub(crate) fn coverage(
        &self,
        words: &[String],
        chunks: &[&StoredChunk],
    ) -> Result<Vec<f32>, IndexError> {
        let f = self.fields;
        let n_docs = self.searcher.num_docs().max(1) as f32;
        let mut covered = vec![0.0f32; chunks.len()];
        let mut total = 0.0f32;
        for word in words {
            let body = Term::from_field_text(f.body, word);
            let df = self.searcher.doc_freq(&body)? as f32;
            let idf = (1.0 + (n_docs - df + 0.5) / (df + 0.5)).ln();
            total += idf;
            if df == 0.0 && !self.in_any(word, &[f.path_text, f.symbol_text])? {
                continue;
            }
            for (i, chunk) in chunks.iter().enumerate() {
                let Some(address) = chunk.address else {
                    continue;
                };
                for field in [f.body, f.path_text, f.symbol_text] {
                    if self.holds(address, &Term::from_field_text(field, word))? {
                        covered[i] += idf;
                        break;
                    }
                }
            }
        }
        Ok(covered
            .into_iter()
            .map(|c| if total > 0.0 { c / total } else { 0.0 })
            .collect())
    }

    fn in_any(&self, word: &str, fields: &[Field]) -> Result<bool, IndexError> {
        for field in fields {
            if self
                .searcher
                .doc_freq(&Term::from_field_text(*field, word))?
                > 0
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether the document at `address` holds `term`.
    fn holds(&self, address: DocAddress, term: &Term) -> Result<bool, IndexError> {
        let segment = self.searcher.segment_reader(address.segment_ord);
        let index = segment
            .inverted_index(term.field())
            .map_err(|err| IndexError::Engine(err.to_string()))?;
        let Some(mut postings) = index
            .read_postings(term, IndexRecordOption::Basic)
            .map_err(|err| IndexError::Engine(err.to_string()))?
        else {
            return Ok(false);
        };
        // A fresh posting list stands on its first document; `seek` only moves forward.
        let at = postings.doc();
        if at == TERMINATED || at > address.doc_id {
            return Ok(false);
        }
        Ok(postings.seek(address.doc_id) == address.doc_id)
    }

    /// The stored chunk with this id, if it is still live.
    pub(crate) fn chunk(&self, chunk_id: u64) -> Result<Option<StoredChunk>, IndexError> {
        let term = Term::from_field_u64(self.fields.chunk_id, chunk_id);
        let query = TermQuery::new(term, IndexRecordOption::Basic);
        let top = self
            .searcher
            .search(&query, &TopDocs::with_limit(1).order_by_score())?;
        match top.first() {
            Some((_, address)) => {
                let doc: TantivyDocument = self.searcher.doc(*address)?;
                let mut chunk = self.stored(&doc);
                chunk.address = Some(*address);
                Ok(Some(chunk))
            }
            None => Ok(None),
        }
    }

    fn stored(&self, doc: &TantivyDocument) -> StoredChunk {
        let f = self.fields;
        let text = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_str().map(str::to_string))
        };
        let num = |field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
        StoredChunk {
            path: text(f.key).unwrap_or_default(),
            chunk_id: num(f.chunk_id),
            start_line: num(f.start_line) as usize,
            end_line: num(f.end_line) as usize,
            language: text(f.language).unwrap_or_default(),
            kind: text(f.kind).unwrap_or_default(),
            symbol: text(f.symbol),
            generated: num(f.generated) == 1,
            address: None,
        }
    }
}

impl Searcher {
    /// Every chunk of `path`, in line order.
    pub(crate) fn chunks_of(&self, path: &str) -> Result<Vec<StoredChunk>, IndexError> {
        let query = TermQuery::new(path_term(&self.fields, path), IndexRecordOption::Basic);
        let top = self
            .searcher
            .search(&query, &TopDocs::with_limit(10_000).order_by_score())?;
        let mut out = Vec::with_capacity(top.len());
        for (_, address) in top {
            let doc: TantivyDocument = self.searcher.doc(address)?;
            out.push(self.stored(&doc));
        }
        out.sort_by_key(|c| (c.start_line, c.end_line));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_index_stores_its_fields_uncompressed_and_an_old_one_keeps_its_settings() {
        let dir = tempfile::tempdir().unwrap();
        let new = Lexical::open_or_create(dir.path()).unwrap();
        assert_eq!(new.index.settings().docstore_compression, Compressor::None);
        // An index created with the library's default (LZ4) opens as it is.
        let old_dir = tempfile::tempdir().unwrap();
        let directory = MmapDirectory::open(old_dir.path()).unwrap();
        Index::create(directory, schema().0, IndexSettings::default()).unwrap();
        let old = Lexical::open_or_create(old_dir.path()).unwrap();
        assert_eq!(
            old.index.settings().docstore_compression,
            IndexSettings::default().docstore_compression
        );
        assert_ne!(old.index.settings().docstore_compression, Compressor::None);
    }
}
