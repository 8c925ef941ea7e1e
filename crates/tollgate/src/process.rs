//! Running an external tool with a deadline and bounded output.
//!
//! The tool gets an argument vector (never a shell), a null stdin, and its own process group, so
//! that on timeout the whole tree it started (node wrappers, worker processes) is killed at once
//! with `SIGKILL` to the group. After the tool exits, whatever is left of its group is killed
//! too: a grandchild holding the output pipes open would otherwise keep the readers waiting.
//!
//! stdout and stderr are read on their own threads up to a byte limit each; the rest is read and
//! dropped so the tool never blocks on a full pipe, and the result says it was truncated. The
//! caller's thread waits on the process itself, so a normal exit wakes it directly; a watchdog
//! thread sleeps until the deadline and kills the group only if it is still running then, so
//! the deadline costs no polling and adds nothing to the path of a tool that finishes in time.
//! A descendant that left the group (`setsid`) cannot be reached; if it keeps the pipes open, the
//! output read so far is used after a short grace period and marked truncated.

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::control::Control;

/// A program and its arguments, to run in `cwd`.
#[derive(Debug, Clone)]
pub(crate) struct ToolCommand {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    pub(crate) cwd: PathBuf,
    /// Extra environment variables on top of the inherited environment.
    pub(crate) env: Vec<(OsString, OsString)>,
    /// Bytes written to the tool's stdin (then closed); `None` gives it a null stdin.
    pub(crate) stdin: Option<Vec<u8>>,
}

impl ToolCommand {
    pub(crate) fn new(program: &Path, cwd: &Path) -> ToolCommand {
        ToolCommand {
            program: program.to_path_buf(),
            args: Vec::new(),
            cwd: cwd.to_path_buf(),
            env: Vec::new(),
            stdin: None,
        }
    }

    /// Feeds `bytes` to the tool's stdin (the `command` model provider's prompt).
    pub(crate) fn stdin(mut self, bytes: Vec<u8>) -> ToolCommand {
        self.stdin = Some(bytes);
        self
    }

    pub(crate) fn arg(mut self, arg: impl Into<OsString>) -> ToolCommand {
        self.args.push(arg.into());
        self
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> ToolCommand
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub(crate) fn env(mut self, key: &str, value: &str) -> ToolCommand {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The command line for messages (not for a shell).
    pub(crate) fn display(&self) -> String {
        let mut line = self.program.display().to_string();
        for arg in &self.args {
            line.push(' ');
            line.push_str(&arg.to_string_lossy());
        }
        line
    }
}

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// Exited on its own with this code.
    Code(i32),
    /// Ended by a signal it did not get from us (a crash, an OOM kill).
    Signal(i32),
    /// Ran past the deadline; its process group was killed.
    TimedOut,
    /// The caller asked to stop; its process group was killed.
    Cancelled,
}

/// How often the watchdog looks at the caller's stop request.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Why the watchdog killed a tool.
#[derive(Debug, Clone, Copy)]
enum Killed {
    Deadline,
    Stopped,
}

/// What a run produced.
#[derive(Debug)]
pub(crate) struct ProcessOutput {
    pub(crate) exit: Exit,
    /// From spawning to the end of the wait.
    pub(crate) elapsed: Duration,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
    pub(crate) stdout_truncated: bool,
    pub(crate) stderr_truncated: bool,
}

/// Runs `command` until it exits or `deadline` passes, keeping at most `max_output_bytes` of
/// each output stream. An error means the process could not be started.
pub(crate) fn run(
    command: &ToolCommand,
    deadline: Instant,
    max_output_bytes: usize,
    stop: &Control,
) -> io::Result<ProcessOutput> {
    let mut cmd = Command::new(&command.program);
    cmd.args(&command.args)
        .current_dir(&command.cwd)
        .stdin(if command.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in &command.env {
        cmd.env(key, value);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own group (pgid = its pid), so the whole tree can be signalled at once.
        cmd.process_group(0);
    }
    let started = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = child.id();
    // Written on its own thread: a tool that prints before it has read all its input would
    // otherwise deadlock against us on full pipes. A tool that exits early breaks the pipe,
    // which is its business, not an error of the run.
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), command.stdin.clone()) {
        thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&bytes);
        });
    }
    let stdout = child
        .stdout
        .take()
        .map(|out| spawn_reader(out, max_output_bytes));
    let stderr = child
        .stderr
        .take()
        .map(|err| spawn_reader(err, max_output_bytes));

    // Dropping `cancel` (once the wait returns) wakes the watchdog without a kill.
    let (cancel, cancelled) = mpsc::channel::<()>();
    let stop = stop.clone();
    // Wakes at the deadline, and every STOP_POLL to look at the caller's stop request.
    let watchdog = thread::spawn(move || {
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            match cancelled.recv_timeout(remaining.min(STOP_POLL)) {
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let why = if stop.is_cancelled() {
                        Killed::Stopped
                    } else if remaining <= STOP_POLL {
                        Killed::Deadline
                    } else {
                        continue;
                    };
                    kill_tree(pid);
                    return Some(why);
                }
                Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    });
    // SIGKILL cannot be ignored, so after a timeout this returns promptly too.
    let status = child.wait();
    drop(cancel);
    let elapsed = started.elapsed();
    let killed = watchdog.join().unwrap_or(None);
    // Stragglers of the group (daemonised helpers, a backgrounded child) would hold the pipes.
    kill_group(pid);
    let status = status?;
    // A tool that exited on its own just as the deadline passed keeps its own exit code.
    let timed_out = killed.filter(|_| status.code().is_none());

    let grace = Instant::now() + OUTPUT_GRACE;
    let (stdout, stdout_truncated) = collect(stdout, grace);
    let (stderr, stderr_truncated) = collect(stderr, grace);
    let exit = match timed_out {
        Some(Killed::Deadline) => Exit::TimedOut,
        Some(Killed::Stopped) => Exit::Cancelled,
        None => exit_of(status),
    };
    Ok(ProcessOutput {
        exit,
        elapsed,
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
    })
}

/// The time left before `deadline`, or `None` once it has passed.
pub(crate) fn remaining(deadline: Instant) -> Option<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    (!left.is_zero()).then_some(left)
}

/// How long output may keep arriving after the process group is gone.
const OUTPUT_GRACE: Duration = Duration::from_secs(2);

/// What a reader thread sends: kept bytes, then at most one `Truncated`; the channel closes at EOF.
enum Chunk {
    Data(Vec<u8>),
    Truncated,
}

fn spawn_reader(mut stream: impl Read + Send + 'static, limit: usize) -> mpsc::Receiver<Chunk> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut n_kept = 0usize;
        let mut truncated = false;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let room = limit.saturating_sub(n_kept);
                    if room > 0
                        && sender
                            .send(Chunk::Data(buf[..n.min(room)].to_vec()))
                            .is_err()
                    {
                        break;
                    }
                    n_kept += n.min(room);
                    if n > room && !truncated {
                        truncated = true;
                        if sender.send(Chunk::Truncated).is_err() {
                            break;
                        }
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    });
    receiver
}

/// Gathers a reader's bytes until EOF or `until`; the flag says something was left out.
fn collect(reader: Option<mpsc::Receiver<Chunk>>, until: Instant) -> (Vec<u8>, bool) {
    let Some(reader) = reader else {
        return (Vec::new(), false);
    };
    let mut kept = Vec::new();
    let mut truncated = false;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match reader.recv_timeout(left) {
            Ok(Chunk::Data(bytes)) => kept.extend_from_slice(&bytes),
            Ok(Chunk::Truncated) => truncated = true,
            Err(mpsc::RecvTimeoutError::Disconnected) => return (kept, truncated),
            Err(mpsc::RecvTimeoutError::Timeout) => return (kept, true),
        }
    }
}

#[cfg(unix)]
fn exit_of(status: ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Signal(0),
    }
}

#[cfg(not(unix))]
fn exit_of(status: ExitStatus) -> Exit {
    Exit::Code(status.code().unwrap_or(-1))
}

/// Kills the process group led by `pid`, and `pid` itself in case it left its group. The caller
/// is blocked in `wait` on this very child, which has not returned yet, so the pid has not been
/// reaped and still names it (only an exit in the same instant could race with this).
#[cfg(unix)]
fn kill_tree(pid: u32) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    kill_group(pid);
    if let Ok(raw) = i32::try_from(pid) {
        let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
    }
}

#[cfg(unix)]
fn kill_group(pid: u32) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else { return };
    // ESRCH (the group is already gone) is the usual and harmless outcome after a normal exit.
    let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
}

/// Without process groups, the system's `taskkill` takes the tree (`/T`); the `Child` itself is
/// borrowed by the waiting thread.
#[cfg(not(unix))]
fn kill_tree(pid: u32) {
    let _ = Command::new("taskkill")
        .args(["/F", "/T", "/PID", &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn in_secs(secs: u64) -> Instant {
        Instant::now() + Duration::from_secs(secs)
    }

    #[test]
    fn captures_exit_code_and_both_streams_without_a_shell() {
        let dir = tempfile::tempdir().unwrap();
        let tool = script(dir.path(), "tool", "echo \"out:$1\"; echo err >&2; exit 3");
        // A shell would expand this; an argument vector passes it through as text.
        let command = ToolCommand::new(&tool, dir.path()).arg("$(touch pwned)");
        let output = run(&command, in_secs(30), 1024, &Control::default()).unwrap();
        assert_eq!(output.exit, Exit::Code(3));
        assert_eq!(output.stdout, b"out:$(touch pwned)\n");
        assert_eq!(output.stderr, b"err\n");
        assert!(!dir.path().join("pwned").exists());
    }

    #[test]
    fn output_beyond_the_limit_is_drained_and_dropped() {
        let dir = tempfile::tempdir().unwrap();
        // 2 MB through a 64 KB pipe: the tool would hang if the excess were not read.
        let tool = script(
            dir.path(),
            "loud",
            "head -c 2000000 /dev/zero; echo done >&2",
        );
        let output = run(
            &ToolCommand::new(&tool, dir.path()),
            in_secs(30),
            1000,
            &Control::default(),
        )
        .unwrap();
        assert_eq!(output.exit, Exit::Code(0));
        assert_eq!(output.stdout.len(), 1000);
        assert!(output.stdout_truncated);
        assert!(!output.stderr_truncated);
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let dir = tempfile::tempdir().unwrap();
        let command = ToolCommand::new(&dir.path().join("absent"), dir.path());
        let err = run(&command, in_secs(5), 1024, &Control::default()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn timeout_kills_the_whole_process_tree() {
        let dir = tempfile::tempdir().unwrap();
        let (tool, pid_file) = slow_tree(dir.path());
        // Had the run waited on the tool, this would hang until nextest's terminate-after.
        let output = run(
            &ToolCommand::new(&tool, dir.path()),
            Instant::now() + Duration::from_millis(500),
            1024,
            &Control::default(),
        )
        .unwrap();
        assert_eq!(output.exit, Exit::TimedOut);
        let child = child_pid(&pid_file);
        assert!(!process_alive(child), "the sleeping child {child} survived");
    }

    #[test]
    fn a_stop_request_kills_the_whole_process_tree() {
        let dir = tempfile::tempdir().unwrap();
        let (tool, pid_file) = slow_tree(dir.path());
        let stop = Control::default();
        let stopper = {
            let stop = stop.clone();
            let pid_file = pid_file.clone();
            // Stops once the tool is running (its child's pid is written).
            std::thread::spawn(move || {
                while !pid_file.exists() {
                    std::thread::sleep(Duration::from_millis(10));
                }
                stop.cancel();
            })
        };
        // The deadline is far: only the stop request can end this run.
        let output = run(
            &ToolCommand::new(&tool, dir.path()),
            in_secs(100_000),
            1024,
            &stop,
        )
        .unwrap();
        stopper.join().unwrap();
        assert_eq!(output.exit, Exit::Cancelled);
        let child = child_pid(&pid_file);
        assert!(!process_alive(child), "the sleeping child {child} survived");
    }

    #[test]
    fn stragglers_do_not_keep_the_run_waiting() {
        let dir = tempfile::tempdir().unwrap();
        // Exits at once but leaves a child holding stdout open.
        let tool = script(dir.path(), "leaky", "sleep 100000 &\necho bye");
        let output = run(
            &ToolCommand::new(&tool, dir.path()),
            in_secs(100_000),
            1024,
            &Control::default(),
        )
        .unwrap();
        assert_eq!(output.exit, Exit::Code(0));
        assert_eq!(output.stdout, b"bye\n");
    }

    /// A tool that starts a sleeping child and waits on it, as a node wrapper does, and the
    /// file where it writes the child's pid.
    fn slow_tree(dir: &Path) -> (PathBuf, PathBuf) {
        let pid_file = dir.join("child.pid");
        let tool = script(
            dir,
            "slow",
            &format!("sleep 100000 &\necho $! > {}\nwait", pid_file.display()),
        );
        (tool, pid_file)
    }

    fn child_pid(pid_file: &Path) -> i32 {
        std::fs::read_to_string(pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// Whether `pid` is a live process (a zombie counts as gone: it no longer runs).
    fn process_alive(pid: i32) -> bool {
        // Give the kernel a moment to deliver the SIGKILL and reparent the child.
        for _ in 0..100 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return false,
                Ok(stat) => {
                    let state = stat
                        .rsplit(')')
                        .next()
                        .and_then(|rest| rest.split_whitespace().next());
                    if state == Some("Z") || state == Some("X") {
                        return false;
                    }
                }
            }
            thread::sleep(Duration::from_millis(20));
        }
        true
    }
}
