//! The HNSW graph (hnsw_rs) over the vector store, used once the store is large enough that an
//! exact pass costs more than a graph walk. The graph is a cache: hnsw_rs cannot delete, so
//! dead vectors are filtered during the walk, vectors added after the build are searched
//! exactly, and the graph is rebuilt when either exceeds a fifth of it. Each build is dumped
//! under a fresh name and `graph.json` is switched to it afterwards, so a reader never sees a
//! half-written graph.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use hnsw_rs::prelude::{AnnT, DistCosine, Hnsw, HnswIo};
use serde::{Deserialize, Serialize};

use crate::error::IndexError;
use crate::store;
use crate::vectors::Loaded;

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
    let graph_dir = dir.join("graph");
    let mut io = HnswIo::new(&graph_dir, &meta.basename);
    let hnsw: Hnsw<f32, DistCosine> = match io.load_hnsw() {
        Ok(hnsw) => hnsw,
        Err(_) => return Ok(loaded.search(query, k, allowed)),
    };
    let live: HashMap<u64, u64> = (0..loaded.len())
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

/// Rebuilds the graph when the store has at least `min_points` live vectors and the graph is
/// missing or stale; removes it when the store shrank below. Returns whether it was rebuilt.
pub(crate) fn refresh(dir: &Path, loaded: &Loaded, min_points: usize) -> Result<bool, IndexError> {
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
    hnsw.parallel_insert(&items);
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
