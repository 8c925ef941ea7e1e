//! A workspace with its code index: the root every path argument is confined to, where the
//! index lives (`<root>/.tollgate/index`, never through a link), the embedder it uses, and the
//! control an index build started on its behalf reports to. The context operations
//! (`api::context`), the knowledge store and the plan scan open the index through it.

use std::path::{Path, PathBuf};

use tollgate_index::IndexConfig;
pub use tollgate_index::{Embedder, HashedEmbedder, HttpEmbedder, IndexError, Progress};

use super::{PathError, Workspace};
use crate::control::Control;

/// The workspace the operations work on: its root (through which every path argument is
/// confined), its index and the embedder the index uses.
#[derive(Debug)]
pub struct IndexedWorkspace {
    paths: Workspace,
    index: IndexConfig,
    embedder: Box<dyn Embedder>,
    /// Watches and stops the index build a search starts when there is no index yet.
    control: Control,
}

impl IndexedWorkspace {
    /// `root` is canonicalised (every path argument resolves inside it); the index lives in
    /// `<root>/.tollgate/index` (refused when `.tollgate` is a symbolic link: a repository could
    /// point it anywhere) and uses the built-in hashed embedder.
    pub fn open(root: &Path) -> Result<IndexedWorkspace, PathError> {
        let paths = Workspace::new(root).map_err(|source| PathError::Io {
            path: root.display().to_string(),
            source,
        })?;
        let mut index = IndexConfig::new(paths.root());
        index.dir = paths.state_dir("index")?;
        Ok(IndexedWorkspace {
            paths,
            index,
            embedder: Box::new(HashedEmbedder),
            control: Control::default(),
        })
    }

    /// Reports the index build a search may start (a search builds the index on first use when
    /// there is none) to `control`, and stops it when `control` is cancelled.
    pub fn with_control(mut self, control: Control) -> IndexedWorkspace {
        self.control = control;
        self
    }

    /// Reads at most `depth` commits (newest first) when the history channel is built.
    pub fn with_history_depth(mut self, depth: usize) -> IndexedWorkspace {
        self.index.max_commits = depth;
        self
    }

    /// Keeps the index somewhere else.
    pub fn with_index_dir(mut self, dir: PathBuf) -> IndexedWorkspace {
        self.index.dir = dir;
        self
    }

    /// Uses another embedder (an index built with a different one is rebuilt by the next
    /// `index_workspace`).
    pub fn with_embedder(mut self, embedder: Box<dyn Embedder>) -> IndexedWorkspace {
        self.embedder = embedder;
        self
    }

    /// Uses the embedder `[index] embedder` names (the hashed one when none is set); a model
    /// is loaded once per process and shared by every workspace that names it.
    pub fn with_configured_embedder(
        self,
        settings: &crate::config::RawIndex,
    ) -> Result<IndexedWorkspace, IndexError> {
        let Some(spec) = settings.embedder.as_deref().map(str::trim) else {
            return Ok(self);
        };
        if spec.is_empty() || spec == "hashed" {
            return Ok(self.with_embedder(Box::new(HashedEmbedder)));
        }
        let Some(dir) = spec.strip_prefix("model2vec:") else {
            return Err(IndexError::InvalidInput(format!(
                "[index] embedder `{spec}` is neither `hashed` nor `model2vec:DIR`"
            )));
        };
        let dir = self.root().join(dir);
        let model = shared_model(&dir)?;
        Ok(self.with_embedder(Box::new(Shared(model))))
    }

    pub fn root(&self) -> &Path {
        self.paths.root()
    }

    /// The root as the confinement type every path argument goes through.
    pub fn paths(&self) -> &Workspace {
        &self.paths
    }

    pub fn index_config(&self) -> &IndexConfig {
        &self.index
    }

    pub fn embedder(&self) -> &dyn Embedder {
        self.embedder.as_ref()
    }

    pub(crate) fn control(&self) -> &Control {
        &self.control
    }

    /// Creates the default index directory (with the state root's `.gitignore`) before an index
    /// is written; an index kept elsewhere is the caller's to place.
    pub(crate) fn prepare_index_dir(&self) -> Result<(), PathError> {
        if self.paths.state_dir("index")? == self.index.dir {
            self.paths.create_state_dir("index")?;
        }
        Ok(())
    }
}

/// Models loaded by this process, by directory: an MCP server opens the workspace per call and
/// must not read a model of a hundred megabytes each time.
fn shared_model(dir: &Path) -> Result<std::sync::Arc<dyn Embedder>, IndexError> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Arc<dyn Embedder>>>> = OnceLock::new();
    let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut loaded = LOADED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(model) = loaded.get(&key) {
        return Ok(Arc::clone(model));
    }
    let model: Arc<dyn Embedder> = Arc::new(tollgate_index::Model2VecEmbedder::load(&key)?);
    loaded.insert(key, Arc::clone(&model));
    Ok(model)
}

/// An embedder shared between workspaces.
#[derive(Debug)]
struct Shared(std::sync::Arc<dyn Embedder>);

impl Embedder for Shared {
    fn id(&self) -> String {
        self.0.id()
    }

    fn dim(&self) -> usize {
        self.0.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        self.0.embed(texts)
    }
}
