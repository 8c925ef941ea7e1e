//! Reading the files a user names (`--diff`, `--import-sarif`, `--baseline`, `tollgate.toml`,
//! invariants, the Action's event payload and artifacts) and stdin, with a size limit.
//!
//! Every such read goes through here, so a hostile or mistaken input cannot hang a run or
//! exhaust memory: only regular files are read (a FIFO, a socket or `/dev/zero` is refused
//! after a `stat`, and the file is opened non-blocking then checked again on the open handle,
//! so swapping in a FIFO after the `stat` cannot block either); the size is checked on the
//! handle before reading, and the read itself stops one byte past the limit, so a file that
//! grows meanwhile or a stream without end is still refused. Errors name the input, the path
//! and the limit, and say how to raise the limit when a setting can.

use crate::ErrorCode;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Default limit for the big inputs: diffs (files and stdin), imported SARIF and baselines.
/// Raised with `review.max_input_bytes` / `TOLLGATE_MAX_INPUT_BYTES` / `--max-input-bytes`.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 128 * 1024 * 1024;
/// `tollgate.toml` files are small by nature.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// How much of an input may be read, and how a user can raise it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    /// The setting that raises it, if any (named in the error).
    pub setting: Option<&'static str>,
}

impl Limit {
    /// A limit no setting changes.
    pub const fn fixed(bytes: u64) -> Limit {
        Limit {
            bytes,
            setting: None,
        }
    }

    /// The configurable limit of the big inputs (see [`DEFAULT_MAX_INPUT_BYTES`]).
    pub const fn max_input(bytes: u64) -> Limit {
        Limit {
            bytes,
            setting: Some(
                "review.max_input_bytes in tollgate.toml, TOLLGATE_MAX_INPUT_BYTES or --max-input-bytes",
            ),
        }
    }
}

/// An input could not be read. `what` names the kind of input (`diff`, `SARIF file`, …).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    #[error("{what} {path} does not exist")]
    NotFound { what: String, path: String },
    #[error(
        "{what} {path} is {kind}, not a regular file; only regular files are read (a pipe or device may block or never end)"
    )]
    NotRegular {
        what: String,
        path: String,
        kind: &'static str,
    },
    #[error("{what} {path} is larger than the limit of {limit} bytes{}", raise_hint(.setting))]
    TooLarge {
        what: String,
        path: String,
        limit: u64,
        setting: Option<&'static str>,
    },
    #[error("Cannot read {what} {path}: {source}")]
    Io {
        what: String,
        path: String,
        #[source]
        source: io::Error,
    },
}

impl InputError {
    /// Stable machine code.
    pub fn code(&self) -> ErrorCode {
        match self {
            InputError::NotFound { .. } => ErrorCode::FileNotFound,
            InputError::NotRegular { .. } => ErrorCode::InvalidInput,
            InputError::TooLarge { .. } => ErrorCode::InputTooLarge,
            InputError::Io { .. } => ErrorCode::IoError,
        }
    }
}

fn raise_hint(setting: &Option<&'static str>) -> String {
    match setting {
        Some(setting) => format!("; raise it with {setting}"),
        None => String::new(),
    }
}

/// Reads the regular file at `path` (symlinks followed), at most `limit.bytes` bytes.
pub fn read_file(path: &Path, what: &str, limit: Limit) -> Result<Vec<u8>, InputError> {
    let display = path.display().to_string();
    let io_error = |source: io::Error| {
        if source.kind() == io::ErrorKind::NotFound {
            InputError::NotFound {
                what: what.to_string(),
                path: display.clone(),
            }
        } else {
            InputError::Io {
                what: what.to_string(),
                path: display.clone(),
                source,
            }
        }
    };
    let not_regular = |file_type: std::fs::FileType| InputError::NotRegular {
        what: what.to_string(),
        path: display.clone(),
        kind: kind_of(file_type),
    };
    // `stat` first: opening a FIFO for reading would block until a writer appears.
    let metadata = std::fs::metadata(path).map_err(io_error)?;
    if !metadata.is_file() {
        return Err(not_regular(metadata.file_type()));
    }
    let file = open_non_blocking(path).map_err(io_error)?;
    // The path may have been swapped since the `stat`: judge the handle.
    let metadata = file.metadata().map_err(io_error)?;
    if !metadata.is_file() {
        return Err(not_regular(metadata.file_type()));
    }
    let too_large = || InputError::TooLarge {
        what: what.to_string(),
        path: display.clone(),
        limit: limit.bytes,
        setting: limit.setting,
    };
    if metadata.len() > limit.bytes {
        return Err(too_large());
    }
    read_bounded(file, limit.bytes, metadata.len())
        .map_err(io_error)?
        .ok_or_else(too_large)
}

/// Reads a stream (stdin, say) to its end, at most `limit.bytes` bytes; `label` names it in
/// errors.
pub fn read_stream(
    reader: impl Read,
    what: &str,
    label: &str,
    limit: Limit,
) -> Result<Vec<u8>, InputError> {
    read_bounded(reader, limit.bytes, 0)
        .map_err(|source| InputError::Io {
            what: what.to_string(),
            path: label.to_string(),
            source,
        })?
        .ok_or_else(|| InputError::TooLarge {
            what: what.to_string(),
            path: label.to_string(),
            limit: limit.bytes,
            setting: limit.setting,
        })
}

/// Reads to the end; `None` when there is more than `limit` bytes. `expected` sizes the buffer
/// (never beyond the limit).
fn read_bounded(reader: impl Read, limit: u64, expected: u64) -> io::Result<Option<Vec<u8>>> {
    let capacity = usize::try_from(expected.min(limit)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity);
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

#[cfg(unix)]
fn open_non_blocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: a FIFO swapped in after the `stat` opens at once instead of waiting for a
    // writer (and is then refused). It changes nothing for regular files.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_non_blocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

fn kind_of(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.diff");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_file(&path, "diff", Limit::fixed(5)).unwrap(), b"12345");
        let err = read_file(&path, "diff", Limit::max_input(4)).unwrap_err();
        assert_eq!(err.code(), "INPUT_TOO_LARGE");
        assert_eq!(
            err.to_string(),
            format!(
                "diff {} is larger than the limit of 4 bytes; raise it with review.max_input_bytes in tollgate.toml, TOLLGATE_MAX_INPUT_BYTES or --max-input-bytes",
                path.display()
            )
        );
    }

    #[test]
    fn missing_files_and_directories_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read_file(&dir.path().join("nope"), "baseline", Limit::fixed(9));
        assert_eq!(missing.unwrap_err().code(), "FILE_NOT_FOUND");
        let err = read_file(dir.path(), "baseline", Limit::fixed(9)).unwrap_err();
        assert!(
            err.to_string()
                .contains("is a directory, not a regular file"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_without_reading() {
        let err =
            read_file(Path::new("/dev/zero"), "SARIF file", Limit::fixed(1 << 30)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "SARIF file /dev/zero is a device, not a regular file; only regular files are read (a pipe or device may block or never end)"
        );
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // No writer ever opens it: a blocking open would hang this test.
        let err = read_file(&fifo, "diff", Limit::fixed(10)).unwrap_err();
        assert!(err.to_string().contains("is a FIFO"), "{err}");
    }

    #[test]
    fn endless_streams_stop_one_byte_past_the_limit() {
        let err = read_stream(io::repeat(b'x'), "diff", "stdin", Limit::fixed(1000)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "diff stdin is larger than the limit of 1000 bytes"
        );
        let read = read_stream(&b"abc"[..], "diff", "stdin", Limit::fixed(3)).unwrap();
        assert_eq!(read, b"abc");
    }
}
