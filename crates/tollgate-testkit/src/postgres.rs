//! A throwaway PostgreSQL server for tests: `initdb` and `pg_ctl` from the machine's PostgreSQL
//! binaries, a cluster in a temporary directory listening on a loopback port (trust
//! authentication, no fsync), stopped and removed when the last test of the process that uses
//! it is done. Run as root (CI), the server runs as the unprivileged user `nobody`, since
//! PostgreSQL refuses to run as root.
//!
//! ```ignore
//! let Some(db) = tollgate_testkit::postgres::database() else { return }; // skipped: no PostgreSQL
//! let store = Store::open_url(dir, &db.url().parse()?, false)?;         // a fresh database
//! ```
//!
//! Each [`database`] is a new, empty database of the shared cluster. Whether PostgreSQL is
//! required: under CI (`CI` set) or with `TOLLGATE_TEST_POSTGRES=1`, missing binaries fail the
//! test; otherwise tests skip when they are missing (or when `TOLLGATE_TEST_POSTGRES=0`). The
//! binaries are looked up in `TOLLGATE_PG_BIN`, then `PATH`, then `/usr/lib/postgresql/*/bin`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

/// The role the tests connect as (the cluster's superuser).
pub const USER: &str = "tollgate";

/// One empty database of a running cluster; the cluster lives while any database does.
#[derive(Debug)]
pub struct Database {
    cluster: Arc<Cluster>,
    name: String,
}

impl Database {
    /// The store URL of this database (no password: the cluster trusts loopback connections).
    pub fn url(&self) -> String {
        format!(
            "postgres://{USER}@127.0.0.1:{}/{}?sslmode=disable",
            self.cluster.port, self.name
        )
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `sql` in this database with `psql` (for tests that need to reach behind the store).
    pub fn psql(&self, sql: &str) -> String {
        let out = self
            .cluster
            .client_command("psql")
            .args([
                "-X",
                "-q",
                "-t",
                "-A",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                &self.name,
                "-c",
                sql,
            ])
            .output()
            .expect("run psql");
        check(&out, "psql");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// A new empty database, or `None` when PostgreSQL is not available and not required (the
/// caller skips its test). Panics when it is required and missing, or when it fails to start.
pub fn database() -> Option<Database> {
    let cluster = shared_cluster()?;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "t_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let out = cluster
        .client_command("createdb")
        .arg(&name)
        .output()
        .expect("run createdb");
    check(&out, "createdb");
    Some(Database { cluster, name })
}

/// Whether a missing PostgreSQL fails the test rather than skipping it.
pub fn required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var("TOLLGATE_TEST_POSTGRES").is_ok_and(|v| v == "1")
}

#[allow(clippy::print_stderr, reason = "a test's note on why it did not run")]
fn shared_cluster() -> Option<Arc<Cluster>> {
    static SHARED: Mutex<Weak<Cluster>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(cluster) = shared.upgrade() {
        return Some(cluster);
    }
    if !required() && std::env::var("TOLLGATE_TEST_POSTGRES").is_ok_and(|v| v == "0") {
        return None;
    }
    let Some(bin) = bin_dir() else {
        assert!(
            !required(),
            "PostgreSQL is required here (CI or TOLLGATE_TEST_POSTGRES=1) but `initdb` and \
             `pg_ctl` were found neither in TOLLGATE_PG_BIN, PATH nor /usr/lib/postgresql/*/bin"
        );
        eprintln!("skipped: no PostgreSQL binaries (set TOLLGATE_PG_BIN or install postgresql)");
        return None;
    };
    let cluster = Arc::new(Cluster::start(&bin));
    *shared = Arc::downgrade(&cluster);
    Some(cluster)
}

fn bin_dir() -> Option<PathBuf> {
    let has_tools = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    if let Some(dir) = std::env::var_os("TOLLGATE_PG_BIN").map(PathBuf::from) {
        return has_tools(&dir).then_some(dir);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if has_tools(&dir) {
                // Through a link (`/usr/local/bin/initdb`) to the directory with every tool.
                let real = dir.join("initdb").canonicalize().ok();
                let real = real
                    .as_deref()
                    .and_then(Path::parent)
                    .filter(|d| has_tools(d));
                return Some(real.map_or(dir.clone(), Path::to_path_buf));
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let dir = entry.path().join("bin");
            has_tools(&dir).then_some((version, dir))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, dir)| dir)
}

/// A running cluster in its own temporary directory.
#[derive(Debug)]
struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    /// The user the server runs as when the tests run as root.
    run_as: Option<&'static str>,
}

impl Cluster {
    fn start(bin: &Path) -> Cluster {
        let dir = temp_dir();
        let run_as = is_root(&dir).then_some("nobody");
        if let Some(user) = run_as {
            let out = Command::new("chown")
                .arg(format!("{user}:"))
                .arg(&dir)
                .output()
                .expect("run chown");
            check(&out, "chown");
        }
        let mut cluster = Cluster {
            bin: bin.to_path_buf(),
            dir,
            port: 0,
            run_as,
        };
        let data = cluster.dir.join("data");
        let out = cluster
            .server_command("initdb")
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                USER,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ])
            .output()
            .expect("run initdb");
        check(&out, "initdb");
        // A free port now may be taken by the time the server binds it: try a few.
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port();
            let options = format!(
                "-h 127.0.0.1 -p {port} -k {} -F -c max_connections=200",
                cluster.dir.display()
            );
            let out = cluster
                .server_command("pg_ctl")
                .arg("-D")
                .arg(&data)
                .args(["-o", &options, "-l"])
                .arg(cluster.dir.join("server.log"))
                .args(["-w", "-t", "60", "start"])
                .output()
                .expect("run pg_ctl");
            if out.status.success() {
                cluster.port = port;
                return cluster;
            }
            last = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(cluster.dir.join("server.log")).unwrap_or_default()
            );
        }
        panic!("the test PostgreSQL server did not start: {last}");
    }

    /// A server tool (`initdb`, `pg_ctl`), run as the unprivileged user when we are root.
    fn server_command(&self, tool: &str) -> Command {
        let program = self.bin.join(tool);
        match self.run_as {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--"]).arg(program);
                command.current_dir(&self.dir);
                command
            }
            None => Command::new(program),
        }
    }

    /// A client tool (`createdb`, `psql`) connected to this cluster.
    fn client_command(&self, tool: &str) -> Command {
        let program = self.bin.join(tool);
        let program = if program.is_file() {
            program
        } else {
            PathBuf::from(tool)
        };
        let mut command = Command::new(program);
        command
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER])
            .env_remove("PGPASSWORD")
            .env_remove("PGDATABASE")
            .env("PGCONNECT_TIMEOUT", "10");
        command
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.port != 0 {
            let _ = self
                .server_command("pg_ctl")
                .arg("-D")
                .arg(self.dir.join("data"))
                .args(["-m", "immediate", "-w", "stop"])
                .output();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn temp_dir() -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    // Short (the server's socket lives in it, under 108 bytes) and reachable by `nobody`,
    // which a TMPDIR under root's home is not.
    let base = Path::new("/tmp");
    let base = if base.is_dir() {
        base.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!(
        "tgpg-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir).expect("create the test cluster's directory");
    dir
}

/// Whether this process runs as root: the owner of a directory it just made.
fn is_root(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(dir).is_ok_and(|meta| meta.uid() == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        false
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("find a free loopback port")
}

fn check(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
