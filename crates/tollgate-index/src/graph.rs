//! The HNSW graph (hnsw_rs) over the vector store, used once the store is large enough that an
//! exact pass costs more than a graph walk. The graph is a cache: hnsw_rs cannot delete, so
//! dead vectors are filtered during the walk, vectors added after the build are searched
//! exactly, and the graph is rebuilt when either exceeds a fifth of it. Each build is dumped
//! under a fresh name and `graph.json` is switched to it afterwards, so a reader never sees a
//! half-written graph. A loaded graph is kept in the process, so a long-lived server (MCP)
//! loads it once; a one-shot CLI search pays the load, which is why graphs start at
//! [`crate::HNSW_MIN_POINTS`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hnsw_rs::prelude::{AnnT, DistCosine, Hnsw, HnswIo};
use serde::{Deserialize, Serialize};

use crate::error::IndexError;
use crate::hash::HashKeyMap;
use crate::store;
use crate::vectors::Loaded;

type Graph = Hnsw<'static, f32, DistCosine>;

/// The graph last loaded in this process, by its dump's path.
static LOADED: Mutex<Option<(PathBuf, Arc<Graph>)>> = Mutex::new(None);

/// The graph dumped as `basename` in `graph_dir`, from this process's cache when it holds it.
fn load(graph_dir: &Path, basename: &str) -> Option<Arc<Graph>> {
    let key = graph_dir.join(basename);
    let mut cached = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((path, graph)) = cached.as_ref()
        && *path == key
    {
        return Some(Arc::clone(graph));
    }
    // hnsw_rs ties a loaded graph to its loader; the loader (paths and options, not the graph)
    // is leaked once per load so the graph can be kept.
    let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(graph_dir, basename)));
    let graph: Graph = io.load_hnsw().ok()?;
    let graph = Arc::new(graph);
    *cached = Some((key, Arc::clone(&graph)));
    Some(graph)
}

const GRAPH_META: &str = "graph.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct GraphMeta {
    basename: String,
    /// Every id at or below this is in the graph (ids only grow).
    max_id: u64,
    points: usize,
}

/// Top-`k` chunk ids by cosine, through the graph when one covers the store, else exactly.
pub(crate) fn search(
    dir: &Path,
    loaded: &Loaded,
    query: &[f32],
    k: usize,
    allowed: &dyn Fn(u64, u64) -> bool,
) -> Result<Vec<(u64, f32)>, IndexError> {
    let meta: Option<GraphMeta> = store::read_json(&dir.join(GRAPH_META)).ok().flatten();
    let Some(meta) = meta else {
        return Ok(loaded.search(query, k, allowed));
    };
    let Some(hnsw) = load(&dir.join("graph"), &meta.basename) else {
        return Ok(loaded.search(query, k, allowed));
    };
    let live: HashKeyMap<u64> = (0..loaded.len())
        .map(|idx| (loaded.id(idx), loaded.file_key(idx)))
        .collect();
    let filter = |id: &usize| {
        live.get(&(*id as u64))
            .is_some_and(|&key| allowed(*id as u64, key))
    };
    let ef = (k * 2).max(64);
    let mut hits: Vec<(u64, f32)> = hnsw
        .search_filter(query, k, ef, Some(&filter))
        .into_iter()
        .map(|n| (n.d_id as u64, 1.0 - n.distance))
        .collect();
    // Vectors added since the build are searched exactly.
    let tail = loaded.search(query, k, &|id, key| id > meta.max_id && allowed(id, key));
    hits.extend(tail);
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(k);
    Ok(hits)
}

/// Points inserted between two looks at whether the update was stopped (a few hundred
/// milliseconds of work on two cores).
const INSERT_BATCH: usize = 4096;

/// Whether a graph has been built (then a shrinking store must remove it).
pub(crate) fn exists(dir: &Path) -> bool {
    dir.join(GRAPH_META).is_file()
}

/// Rebuilds the graph when the store has at least `min_points` live vectors and the graph is
/// missing or stale; removes it when the store shrank below. Returns whether it was rebuilt.
/// `keep_going` is asked after each batch of points inserted: `false` abandons the build
/// (nothing is written, the old graph stays) so a cancelled update releases the index soon.
pub(crate) fn refresh(
    dir: &Path,
    loaded: &Loaded,
    min_points: usize,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<bool, IndexError> {
    let meta_path = dir.join(GRAPH_META);
    let meta: Option<GraphMeta> = store::read_json(&meta_path).ok().flatten();
    if loaded.len() < min_points {
        if meta.is_some() {
            let _ = std::fs::remove_file(&meta_path);
            let _ = std::fs::remove_dir_all(dir.join("graph"));
        }
        return Ok(false);
    }
    if let Some(meta) = &meta {
        let live: HashSet<u64> = loaded.ids().collect();
        let in_graph_live = loaded.ids().filter(|&id| id <= meta.max_id).count();
        let dead = meta.points.saturating_sub(in_graph_live);
        let added = live.len() - in_graph_live;
        if dead * 5 < meta.points && added * 5 < meta.points {
            return Ok(false);
        }
    }
    let graph_dir = dir.join("graph");
    std::fs::create_dir_all(&graph_dir).map_err(|err| IndexError::io(&graph_dir, err))?;
    let n = loaded.len();
    let hnsw: Hnsw<f32, DistCosine> = Hnsw::new(24, n.max(1), 16, 200, DistCosine {});
    let vectors: Vec<Vec<f32>> = (0..n).map(|i| loaded.vector(i)).collect();
    let items: Vec<(&Vec<f32>, usize)> = vectors
        .iter()
        .zip(loaded.ids())
        .map(|(v, id)| (v, id as usize))
        .collect();
    for batch in items.chunks(INSERT_BATCH) {
        hnsw.parallel_insert(batch);
        if !keep_going() {
            return Ok(false);
        }
    }
    let stamp = time::OffsetDateTime::now_utc().unix_timestamp_nanos();
    let basename = hnsw
        .file_dump(&graph_dir, &format!("g{stamp}"))
        .map_err(|err| IndexError::Engine(format!("writing the HNSW graph: {err}")))?;
    let new_meta = GraphMeta {
        basename: basename.clone(),
        max_id: loaded.ids().max().unwrap_or(0),
        points: n,
    };
    store::write_json(&meta_path, &new_meta)?;
    // Older dumps are no longer referenced.
    if let Ok(entries) = std::fs::read_dir(&graph_dir) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !name.starts_with(&format!("{basename}.")) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors::{Record, VectorStore};

    #[test]
    fn a_loaded_graph_is_kept_until_a_rebuild_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::new(dir.path(), "test/8", 8);
        let record = |id: u64| Record {
            chunk_id: id,
            file_key: id % 3,
            vector: (0..8)
                .map(|d| ((id + 1) * (d + 3) * 2_654_435_761 % 1000) as f32 / 1000.0 - 0.5)
                .collect(),
        };
        store
            .append(&(0..40).map(record).collect::<Vec<_>>())
            .unwrap();
        let loaded = store.load().unwrap().unwrap();
        assert!(refresh(dir.path(), &loaded, 10, &mut || true).unwrap());
        let query = record(3).vector;
        let first = search(dir.path(), &loaded, &query, 5, &|_, _| true).unwrap();
        assert_eq!(first.len(), 5);
        assert_eq!(first[0].0, 3, "{first:?}");
        let meta: GraphMeta = store::read_json(&dir.path().join(GRAPH_META))
            .unwrap()
            .unwrap();
        let graph_dir = dir.path().join("graph");
        let cached = load(&graph_dir, &meta.basename).unwrap();
        assert!(Arc::ptr_eq(
            &cached,
            &load(&graph_dir, &meta.basename).unwrap()
        ));

        // Enough new vectors make the graph stale: the rebuild is loaded afresh, and the
        // filter still applies inside the walk.
        store
            .append(&(40..60).map(record).collect::<Vec<_>>())
            .unwrap();
        let loaded = store.load().unwrap().unwrap();
        assert!(refresh(dir.path(), &loaded, 10, &mut || true).unwrap());
        let meta: GraphMeta = store::read_json(&dir.path().join(GRAPH_META))
            .unwrap()
            .unwrap();
        let rebuilt = load(&graph_dir, &meta.basename).unwrap();
        assert!(!Arc::ptr_eq(&cached, &rebuilt));
        let only_key_1 = search(dir.path(), &loaded, &query, 5, &|_, key| key == 1).unwrap();
        assert!(!only_key_1.is_empty() && only_key_1.iter().all(|(id, _)| id % 3 == 1));
    }
}
