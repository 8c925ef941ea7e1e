//! The vector channel's store: Tollgate's own append-only file of chunk vectors (the source of
//! truth), a tombstone list for chunks that were replaced or deleted, and exact cosine search
//! over the live vectors, read in place from a memory map. Vectors are stored as 8-bit codes with one scale each (a quarter of
//! the size of `f32`, ranking unchanged in practice), and searched in one pass.
//!
//! When the store grows past [`HNSW_MIN_POINTS`], an hnsw_rs graph over the vectors is built
//! and used instead of the exact pass (see [`crate::graph`]); the store stays the truth and the
//! graph a cache that is rebuilt when stale.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tantivy::directory::error::OpenReadError;
use tantivy::directory::{Directory, MmapDirectory, OwnedBytes};

use crate::error::IndexError;
use crate::hash::HashKeySet;

const MAGIC: &[u8; 8] = b"TGVEC001";
pub(crate) const VECTORS_FILE: &str = "vectors.bin";
pub(crate) const TOMBSTONES_FILE: &str = "tombstones.bin";

/// From this many live vectors on, an HNSW graph is built and searches walk it. Below, the
/// exact scan is cheaper: it reads the quantised store in place (55k vectors of 512
/// dimensions, 28 MB, in a few milliseconds), while a graph costs minutes to build on two
/// cores at that size and about a second to load per process (measured on ruff: cold index
/// 78 s, query 1 s, with the old threshold of 50k).
pub const HNSW_MIN_POINTS: usize = 200_000;

/// One stored vector (tests write records; an update encodes its vectors as it goes).
#[cfg(test)]
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub chunk_id: u64,
    /// Hash of the file path ([`crate::store::file_key`]), for filters.
    pub file_key: u64,
    pub vector: Vec<f32>,
}

#[derive(Debug)]
pub(crate) struct VectorStore {
    dir: PathBuf,
    embedder_id: String,
    dim: usize,
}

/// The live vectors, read in place from a memory map of the store (tantivy's safe mmap
/// directory): nothing is copied or decoded, so a query costs a scan of the codes only.
pub(crate) struct Loaded {
    pub dim: usize,
    bytes: OwnedBytes,
    /// Offset of the first record in `bytes`.
    body: usize,
    record_len: usize,
    /// Positions of the live records.
    live: Vec<u32>,
    /// Records in the file, dead ones included (staleness).
    pub total_records: usize,
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaded")
            .field("dim", &self.dim)
            .field("live", &self.live.len())
            .field("total_records", &self.total_records)
            .finish()
    }
}

impl VectorStore {
    pub(crate) fn new(dir: &Path, embedder_id: &str, dim: usize) -> VectorStore {
        VectorStore {
            dir: dir.to_path_buf(),
            embedder_id: embedder_id.to_string(),
            dim,
        }
    }

    fn vectors_path(&self) -> PathBuf {
        self.dir.join(VECTORS_FILE)
    }

    fn header(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.dim as u32).to_le_bytes());
        out.extend_from_slice(&(self.embedder_id.len() as u32).to_le_bytes());
        out.extend_from_slice(self.embedder_id.as_bytes());
        out
    }

    fn record_len(&self) -> usize {
        8 + 8 + 4 + self.dim
    }

    /// Drops every vector (a new embedder, a full rebuild).
    pub(crate) fn clear(&self) -> Result<(), IndexError> {
        for name in [VECTORS_FILE, TOMBSTONES_FILE] {
            match fs::remove_file(self.dir.join(name)) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(IndexError::io(self.dir.join(name), err)),
            }
        }
        Ok(())
    }

    #[cfg(test)]
    pub(crate) fn append(&self, records: &[Record]) -> Result<(), IndexError> {
        let mut bytes = Vec::with_capacity(records.len() * (20 + self.dim));
        for record in records {
            encode(record.chunk_id, record.file_key, &record.vector, &mut bytes);
        }
        self.append_encoded(&bytes)
    }

    /// Appends records already laid out by [`encode`] (an update encodes each file's vectors as
    /// it arrives, so that the write after the lexical commit only copies bytes).
    pub(crate) fn append_encoded(&self, bytes: &[u8]) -> Result<(), IndexError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let path = self.vectors_path();
        let fresh = !path.exists();
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|err| IndexError::io(&path, err))?;
        let io = |err| IndexError::io(&path, err);
        if fresh {
            file.write_all(&self.header()).map_err(io)?;
        }
        file.write_all(bytes).map_err(io)?;
        file.sync_data().map_err(io)?;
        Ok(())
    }

    pub(crate) fn tombstone(&self, ids: &[u64]) -> Result<(), IndexError> {
        if ids.is_empty() {
            return Ok(());
        }
        let path = self.dir.join(TOMBSTONES_FILE);
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|err| IndexError::io(&path, err))?;
        let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
        file.write_all(&bytes)
            .map_err(|err| IndexError::io(&path, err))?;
        file.sync_data().map_err(|err| IndexError::io(&path, err))?;
        Ok(())
    }

    fn tombstones(&self) -> Result<HashKeySet, IndexError> {
        let path = self.dir.join(TOMBSTONES_FILE);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(HashKeySet::default());
            }
            Err(err) => return Err(IndexError::io(&path, err)),
        };
        Ok(bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .collect())
    }

    /// The live vectors; `None` when there is no store or it belongs to another embedder.
    pub(crate) fn load(&self) -> Result<Option<Loaded>, IndexError> {
        let path = self.vectors_path();
        if !path.is_file() {
            return Ok(None);
        }
        let engine =
            |err: &dyn std::fmt::Display| IndexError::Engine(format!("{}: {err}", path.display()));
        let directory = MmapDirectory::open(&self.dir).map_err(|err| engine(&err))?;
        let bytes = match directory.open_read(Path::new(VECTORS_FILE)) {
            Ok(slice) => slice
                .read_bytes()
                .map_err(|err| IndexError::io(&path, err))?,
            Err(OpenReadError::FileDoesNotExist(_)) => return Ok(None),
            Err(err) => return Err(engine(&err)),
        };
        let header = self.header();
        if !bytes.as_slice().starts_with(&header) {
            return Ok(None);
        }
        let dead = self.tombstones()?;
        let record_len = self.record_len();
        // A torn final record (a killed run) is ignored.
        let total_records = (bytes.len() - header.len()) / record_len;
        let mut loaded = Loaded {
            dim: self.dim,
            bytes,
            body: header.len(),
            record_len,
            live: Vec::with_capacity(total_records),
            total_records,
        };
        for position in 0..total_records {
            if dead.is_empty() || !dead.contains(&loaded.id_at(position)) {
                loaded.live.push(position as u32);
            }
        }
        Ok(Some(loaded))
    }

    /// Records in the store, live or dead, from its size alone (0 without a store).
    pub(crate) fn stored_records(&self) -> Result<usize, IndexError> {
        let path = self.vectors_path();
        match fs::metadata(&path) {
            Ok(meta) => {
                Ok((meta.len() as usize).saturating_sub(self.header().len()) / self.record_len())
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(err) => Err(IndexError::io(&path, err)),
        }
    }

    /// Tombstones written, from the file's size: at least the number of dead records.
    fn tombstone_count(&self) -> Result<usize, IndexError> {
        let path = self.dir.join(TOMBSTONES_FILE);
        match fs::metadata(&path) {
            Ok(meta) => Ok(meta.len() as usize / 8),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(err) => Err(IndexError::io(&path, err)),
        }
    }

    /// Rewrites the store without dead records when they exceed a fifth of it.
    pub(crate) fn compact_if_stale(&self) -> Result<bool, IndexError> {
        // Sizes first: most updates are far from the threshold, and loading walks every
        // record's id (the whole file's pages) to apply the tombstones.
        let total = self.stored_records()?;
        if total == 0 || self.tombstone_count()? * 5 < total {
            return Ok(false);
        }
        let Some(loaded) = self.load()? else {
            return Ok(false);
        };
        if loaded.total_records == 0
            || (loaded.total_records - loaded.len()) * 5 < loaded.total_records
        {
            return Ok(false);
        }
        let tmp = self.dir.join("vectors.bin.tmp");
        // The map of the old file stays valid after the rename (it holds the old inode).
        {
            let file = File::create(&tmp).map_err(|err| IndexError::io(&tmp, err))?;
            let mut out = BufWriter::new(file);
            let io = |err| IndexError::io(&tmp, err);
            out.write_all(&self.header()).map_err(io)?;
            for i in 0..loaded.len() {
                out.write_all(loaded.record(i)).map_err(io)?;
            }
            let file = out.into_inner().map_err(|err| io(err.into_error()))?;
            file.sync_all().map_err(io)?;
        }
        fs::rename(&tmp, self.vectors_path())
            .map_err(|err| IndexError::io(self.vectors_path(), err))?;
        let tombstones = self.dir.join(TOMBSTONES_FILE);
        let _ = fs::remove_file(tombstones);
        Ok(true)
    }
}

impl Loaded {
    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }

    /// The stored bytes of the `idx`-th live vector.
    fn record(&self, idx: usize) -> &[u8] {
        let start = self.body + self.live[idx] as usize * self.record_len;
        &self.bytes.as_slice()[start..start + self.record_len]
    }

    fn id_at(&self, position: usize) -> u64 {
        let start = self.body + position * self.record_len;
        le_u64(&self.bytes.as_slice()[start..start + 8])
    }

    pub(crate) fn id(&self, idx: usize) -> u64 {
        le_u64(&self.record(idx)[0..8])
    }

    pub(crate) fn file_key(&self, idx: usize) -> u64 {
        le_u64(&self.record(idx)[8..16])
    }

    fn scale(&self, idx: usize) -> f32 {
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.record(idx)[16..20]);
        f32::from_le_bytes(b)
    }

    /// The live chunk ids, in store order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|idx| self.id(idx))
    }

    pub(crate) fn vector(&self, idx: usize) -> Vec<f32> {
        let scale = self.scale(idx);
        self.record(idx)[20..]
            .iter()
            .map(|&c| f32::from(c as i8) * scale)
            .collect()
    }

    /// Exact cosine top-`k` among records `allowed` accepts, best first, ties by chunk id.
    /// The query is quantised like the store, so the scan is integer dot products (which the
    /// compiler vectorises); only the order of scores matters.
    pub(crate) fn search(
        &self,
        query: &[f32],
        k: usize,
        allowed: &dyn Fn(u64, u64) -> bool,
    ) -> Vec<(u64, f32)> {
        let (query_codes, query_scale) = quantise(query);
        let query_codes = QueryCodes::new(&query_codes);
        let mut scored: Vec<(u64, f32)> = Vec::new();
        for idx in 0..self.len() {
            let record = self.record(idx);
            let id = le_u64(&record[0..8]);
            if !allowed(id, le_u64(&record[8..16])) {
                continue;
            }
            let dot = query_codes.dot(&record[20..]);
            scored.push((id, dot as f32 * self.scale(idx) * query_scale));
        }
        let cmp = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > k {
            scored.select_nth_unstable_by(k, cmp);
            scored.truncate(k);
        }
        scored.sort_by(cmp);
        scored
    }
}

/// A quantised query as the scan multiplies it. The hashed embedder's query vector has a few
/// dozen non-zero components of 512 (a short query's tokens and their 3-grams): visiting only
/// those gives the same integer sums for a fraction of the work of the packed scan, which stays
/// for dense queries (a model embedder's, or a long question's).
enum QueryCodes {
    Dense(Vec<i16>),
    /// (component, code) of the non-zero components, in order.
    Sparse(Vec<(usize, i32)>),
}

impl QueryCodes {
    /// Sparse below one non-zero component in `SPARSE_SHARE`: a packed multiply-add handles
    /// 8 components at once, an indexed one 1.
    const SPARSE_SHARE: usize = 8;

    fn new(codes: &[i8]) -> QueryCodes {
        let nonzero: Vec<(usize, i32)> = codes
            .iter()
            .enumerate()
            .filter(|&(_, &code)| code != 0)
            .map(|(i, &code)| (i, i32::from(code)))
            .collect();
        if nonzero.len() * Self::SPARSE_SHARE <= codes.len() {
            QueryCodes::Sparse(nonzero)
        } else {
            QueryCodes::Dense(codes.iter().map(|&c| i16::from(c)).collect())
        }
    }

    fn dot(&self, codes: &[u8]) -> i32 {
        match self {
            QueryCodes::Dense(query) => dot_i8(codes, query),
            QueryCodes::Sparse(nonzero) => nonzero
                .iter()
                .map(|&(i, q)| codes.get(i).map_or(0, |&c| i32::from(c as i8) * q))
                .sum(),
        }
    }
}

/// The dot product of stored codes (bytes of `i8`) and query codes widened to `i16`, in 32
/// independent lanes over fixed-size blocks: that shape compiles to packed multiply-adds even
/// on baseline x86-64, where a plain zip-sum stayed scalar (half of a query's time).
// Not inlined: inside the scan loop LLVM left it scalar.
#[inline(never)]
fn dot_i8(codes: &[u8], query: &[i16]) -> i32 {
    const LANES: usize = 32;
    let mut acc = [0i32; LANES];
    let blocks = codes.len().min(query.len()) / LANES;
    for (c, q) in codes
        .chunks_exact(LANES)
        .zip(query.chunks_exact(LANES))
        .take(blocks)
    {
        let (Ok(c), Ok(q)) = (<&[u8; LANES]>::try_from(c), <&[i16; LANES]>::try_from(q)) else {
            continue; // Unreachable: `chunks_exact` yields exactly `LANES`.
        };
        for lane in 0..LANES {
            // Widened through i16: the product of two i16s is what maps to `pmaddwd`.
            acc[lane] += i32::from(i16::from(c[lane] as i8)) * i32::from(q[lane]);
        }
    }
    let tail: i32 = codes[blocks * LANES..]
        .iter()
        .zip(&query[blocks * LANES..])
        .map(|(&c, &q)| i32::from(c as i8) * i32::from(q))
        .sum();
    acc.iter().sum::<i32>() + tail
}

fn le_u64(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

/// 8-bit codes of `vector` and their scale (`x ≈ code × scale`), as stored.
/// Appends one record to `out` as the store lays it out: chunk id, file key, scale, codes.
pub(crate) fn encode(chunk_id: u64, file_key: u64, vector: &[f32], out: &mut Vec<u8>) {
    out.extend_from_slice(&chunk_id.to_le_bytes());
    out.extend_from_slice(&file_key.to_le_bytes());
    let (codes, scale) = quantise(vector);
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend(codes.iter().map(|&c| c as u8));
}

fn quantise(vector: &[f32]) -> (Vec<i8>, f32) {
    let max = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let inverse = 1.0 / scale;
    // Half away from zero by adding ±0.5 and truncating: `f32::round` is a libm call per
    // element on baseline x86-64 (it was most of writing the store). The cast saturates.
    let codes = vector
        .iter()
        .map(|x| {
            let y = x * inverse;
            (y + 0.5f32.copysign(y)).clamp(-127.0, 127.0) as i8
        })
        .collect();
    (codes, scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::file_key;

    fn unit(dim: usize, hot: usize) -> Vec<f32> {
        let mut v = vec![0.0; dim];
        v[hot] = 1.0;
        v
    }

    #[test]
    fn quantising_rounds_half_away_from_zero_against_the_largest_component() {
        let (codes, scale) = quantise(&[1.0, -0.5, 0.25, 0.0, -1.0, 0.003]);
        assert_eq!(codes, [127, -64, 32, 0, -127, 0]);
        assert!((scale - 1.0 / 127.0).abs() < 1e-9);
        assert_eq!(quantise(&[0.0, 0.0]), (vec![0, 0], 1.0));
    }

    /// A fixed sequence of bytes (a linear congruential generator): test data that never changes.
    fn pseudo_random_bytes(mut seed: u32) -> impl FnMut() -> u8 {
        move || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as u8
        }
    }

    #[test]
    fn the_lane_dot_product_equals_the_plain_one() {
        let mut next = pseudo_random_bytes(7);
        for len in [0, 1, 31, 32, 33, 64, 100, 512, 1000] {
            let codes: Vec<u8> = (0..len).map(|_| next()).collect();
            let query: Vec<i16> = (0..len).map(|_| i16::from(next() as i8)).collect();
            let plain: i32 = codes
                .iter()
                .zip(&query)
                .map(|(&c, &q)| i32::from(c as i8) * i32::from(q))
                .sum();
            assert_eq!(dot_i8(&codes, &query), plain, "length {len}");
        }
    }

    #[test]
    fn a_sparse_query_scores_like_the_packed_scan() {
        let mut next = pseudo_random_bytes(11);
        let records: Vec<Vec<u8>> = (0..20)
            .map(|_| (0..512).map(|_| next()).collect())
            .collect();
        for nonzero in [0, 1, 10, 64, 65, 200, 512] {
            let mut query = vec![0i8; 512];
            for k in 0..nonzero {
                query[(k * 37) % 512] = (next() as i8).max(-127) | 1;
            }
            let codes = QueryCodes::new(&query);
            assert_eq!(
                matches!(codes, QueryCodes::Sparse(_)),
                nonzero <= 64,
                "{nonzero} non-zero components"
            );
            let dense: Vec<i16> = query.iter().map(|&c| i16::from(c)).collect();
            for record in &records {
                assert_eq!(codes.dot(record), dot_i8(record, &dense), "{nonzero}");
            }
        }
    }

    #[test]
    fn append_tombstone_search_compact() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::new(dir.path(), "test/4", 4);
        assert!(store.load().unwrap().is_none());
        let records: Vec<Record> = (0..4)
            .map(|i| Record {
                chunk_id: i,
                file_key: file_key(&format!("f{i}")),
                vector: unit(4, i as usize),
            })
            .collect();
        store.append(&records).unwrap();
        let hits = store
            .load()
            .unwrap()
            .unwrap()
            .search(&unit(4, 2), 2, &|_, _| true);
        assert_eq!(hits[0].0, 2);
        assert!((hits[0].1 - 1.0).abs() < 0.01);
        store.tombstone(&[2]).unwrap();
        let loaded = store.load().unwrap().unwrap();
        assert_eq!(loaded.len(), 3);
        assert!(
            loaded
                .search(&unit(4, 2), 3, &|_, _| true)
                .iter()
                .all(|h| h.0 != 2)
        );
        let only_f1 = file_key("f1");
        assert_eq!(
            loaded
                .search(&unit(4, 2), 3, &|_, key| key == only_f1)
                .len(),
            1
        );
        assert!(store.compact_if_stale().unwrap());
        let loaded = store.load().unwrap().unwrap();
        assert_eq!((loaded.len(), loaded.total_records), (3, 3));
        // Another embedder's store is not read.
        assert!(
            VectorStore::new(dir.path(), "other/4", 4)
                .load()
                .unwrap()
                .is_none()
        );
    }
}
