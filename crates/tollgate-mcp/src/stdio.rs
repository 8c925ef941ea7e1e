//! Stdio framing that answers an oversized request instead of dropping it.
//!
//! The SDK's stdio transport drops a line over its limit and logs it, so the client that sent it
//! waits forever. Between stdin/stdout and the SDK sit two pumps: requests within the limit pass
//! through unchanged; an oversized one is read to its end without being kept (a bounded prefix
//! gives its `id`) and answered with a JSON-RPC error naming the limit, written to stdout between
//! two of the SDK's messages, never inside one.

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream, duplex,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The largest request a client may send over stdio, newline included: the SDK's own limit, so
/// every request the pumps pass on is one the SDK accepts.
pub const MAX_STDIO_REQUEST_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// How much of an oversized request is kept to find its `id` (it comes first in practice).
const ID_PREFIX_BYTES: usize = 64 * 1024;

/// The size of the in-process pipes between the pumps and the SDK.
const PIPE_BYTES: usize = 256 * 1024;

/// The SDK's ends of the two pipes, and the task that writes to stdout: await it after the SDK
/// is done so its last messages are flushed before the process exits.
pub(crate) struct BoundedStdio {
    pub(crate) requests: DuplexStream,
    pub(crate) responses: DuplexStream,
    pub(crate) writer: JoinHandle<()>,
}

/// Starts the pumps between `input`/`output` (stdin/stdout) and the pipes handed to the SDK.
pub(crate) fn bounded<R, W>(input: R, output: W, limit: usize) -> BoundedStdio
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (requests, to_server) = duplex(PIPE_BYTES);
    let (responses, from_server) = duplex(PIPE_BYTES);
    let (refusals, refused) = mpsc::unbounded_channel();
    tokio::spawn(pump_requests(input, to_server, refusals, limit));
    let writer = tokio::spawn(pump_responses(from_server, output, refused));
    BoundedStdio {
        requests,
        responses,
        writer,
    }
}

/// Where the reader is within the current line.
enum Line {
    /// Collecting a line within the limit.
    Within(Vec<u8>),
    /// Skipping the rest of a line over the limit: its length so far and its first bytes.
    Over { len: usize, prefix: Vec<u8> },
}

async fn pump_requests<R: AsyncRead + Unpin>(
    input: R,
    mut to_server: DuplexStream,
    refusals: mpsc::UnboundedSender<Vec<u8>>,
    limit: usize,
) {
    let mut reader = BufReader::new(input);
    let mut line = Line::Within(Vec::new());
    loop {
        let (taken, ended) = {
            let available = match reader.fill_buf().await {
                Ok(available) if !available.is_empty() => available,
                Ok(_) => break,
                Err(err) => {
                    tracing::error!("cannot read stdin: {err}");
                    break;
                }
            };
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let chunk = &available[..take];
            match &mut line {
                Line::Within(bytes) if bytes.len() + take > limit => {
                    let len = bytes.len() + take;
                    let mut prefix = std::mem::take(bytes);
                    prefix.truncate(ID_PREFIX_BYTES);
                    extend_bounded(&mut prefix, chunk);
                    line = Line::Over { len, prefix };
                }
                Line::Within(bytes) => bytes.extend_from_slice(chunk),
                Line::Over { len, prefix } => {
                    *len += take;
                    extend_bounded(prefix, chunk);
                }
            }
            (take, newline.is_some())
        };
        reader.consume(taken);
        if !ended {
            continue;
        }
        match std::mem::replace(&mut line, Line::Within(Vec::new())) {
            Line::Within(bytes) => {
                if to_server.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Line::Over { len, prefix } => {
                tracing::warn!(bytes = len, limit, "refused an oversized stdio request");
                if refusals.send(refusal(&prefix, len, limit)).is_err() {
                    return;
                }
            }
        }
    }
    // End of input: a last line without a newline still goes to the SDK (which decides), then
    // the SDK sees the end of its input and stops.
    if let Line::Within(bytes) = line {
        let _ = to_server.write_all(&bytes).await;
    }
    let _ = to_server.shutdown().await;
}

fn extend_bounded(prefix: &mut Vec<u8>, chunk: &[u8]) {
    let room = ID_PREFIX_BYTES.saturating_sub(prefix.len());
    prefix.extend_from_slice(&chunk[..room.min(chunk.len())]);
}

/// Copies the SDK's messages to `output` line by line, and writes each refusal between two of
/// them.
async fn pump_responses<W: AsyncWrite + Unpin>(
    from_server: DuplexStream,
    mut output: W,
    mut refused: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    let mut from_server = BufReader::new(from_server);
    let mut message = Vec::new();
    let mut waiting: Vec<Vec<u8>> = Vec::new();
    let mut refusals_open = true;
    loop {
        tokio::select! {
            read = from_server.read_until(b'\n', &mut message) => {
                match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) if message.ends_with(b"\n") => {
                        if write_line(&mut output, &message).await.is_err() {
                            return;
                        }
                        message.clear();
                        for refusal in waiting.drain(..) {
                            if write_line(&mut output, &refusal).await.is_err() {
                                return;
                            }
                        }
                    }
                    Ok(_) => {}
                }
            }
            refusal = refused.recv(), if refusals_open => {
                match refusal {
                    // Read bytes of a message in progress stay in `message`: a refusal waits
                    // for its end.
                    Some(refusal) if message.is_empty() => {
                        if write_line(&mut output, &refusal).await.is_err() {
                            return;
                        }
                    }
                    Some(refusal) => waiting.push(refusal),
                    None => refusals_open = false,
                }
            }
        }
    }
    if !message.is_empty() {
        let _ = write_line(&mut output, &message).await;
    }
    waiting.extend(std::iter::from_fn(|| refused.try_recv().ok()));
    for refusal in waiting {
        let _ = write_line(&mut output, &refusal).await;
    }
}

async fn write_line<W: AsyncWrite + Unpin>(output: &mut W, line: &[u8]) -> std::io::Result<()> {
    output.write_all(line).await?;
    output.flush().await
}

/// The JSON-RPC error answering an oversized request, with a newline.
fn refusal(prefix: &[u8], len: usize, limit: usize) -> Vec<u8> {
    let message = format!(
        "the request is {len} bytes, over the stdio transport's limit of {limit} bytes ({} MiB) \
         per message; send less (a smaller diff, fewer files), or use the HTTP transport \
         (`tollgate mcp --http`: {} MiB per request)",
        limit / (1024 * 1024),
        crate::http::HttpOptions::DEFAULT_MAX_BODY_BYTES / (1024 * 1024)
    );
    let answer = json!({
        "jsonrpc": "2.0",
        "id": request_id(prefix).unwrap_or(Value::Null),
        "error": {"code": -32600, "message": message, "data": {"limit_bytes": limit}},
    });
    let mut line = answer.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// The `id` of a JSON-RPC request from the first bytes of its text, when they hold all of it: a
/// number or a string, a member of the top-level object. `None` when the prefix ends first.
fn request_id(text: &[u8]) -> Option<Value> {
    let mut scan = Scanner { text, at: 0 };
    scan.whitespace();
    scan.expect(b'{')?;
    loop {
        scan.whitespace();
        let key = scan.string()?;
        scan.whitespace();
        scan.expect(b':')?;
        scan.whitespace();
        let start = scan.at;
        scan.value()?;
        if key == b"\"id\"" {
            let id: Value = serde_json::from_slice(&text[start..scan.at]).ok()?;
            return matches!(id, Value::Number(_) | Value::String(_)).then_some(id);
        }
        scan.whitespace();
        scan.expect(b',')?;
    }
}

/// Just enough of a JSON reader to step over values in a possibly truncated text.
struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// A string with its quotes.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        self.expect(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return self.text.get(start..self.at);
                }
                _ => self.at += 1,
            }
        }
    }

    /// Any value: a string, an object or array (matched brackets, strings skipped), or a scalar
    /// that must end before the text does (a truncated number is not a number).
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                let start = self.at;
                while !matches!(
                    self.peek()?,
                    b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'
                ) {
                    self.at += 1;
                }
                (self.at > start).then_some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn the_id_is_found_wherever_it_sits_in_a_whole_prefix() {
        let id = |text: &str| request_id(text.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"method":"x""#),
            Some(json!(7))
        );
        assert_eq!(id(r#" { "id" : "a\"b" , "#), Some(json!("a\"b")));
        assert_eq!(
            id(r#"{"method":"tools/call","params":{"id":1,"s":"}\""},"id":9}"#),
            Some(json!(9)),
            "an id inside params is not the request's"
        );
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":12"#), None, "a cut number");
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","method":"x","params":{"diff":"abc"#),
            None
        );
        assert_eq!(id(r#"{"id":null,"#), None);
        assert_eq!(id("not json"), None);
    }

    #[tokio::test]
    async fn an_oversized_request_is_answered_between_messages_and_the_rest_pass() {
        let (client_in, server_stdin) = duplex(1 << 20);
        let (server_stdout, mut client_out) = duplex(1 << 20);
        let limit = 100;
        let mut pipes = bounded(server_stdin, server_stdout, limit);

        let mut client_in = client_in;
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{{\"d\":\"{}\"}}}}\n",
            "x".repeat(300)
        );
        let small = "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}\n";
        client_in.write_all(big.as_bytes()).await.unwrap();
        client_in.write_all(small.as_bytes()).await.unwrap();
        drop(client_in);

        // The SDK's side sees only the small request, then the end of input.
        let mut passed = String::new();
        pipes.requests.read_to_string(&mut passed).await.unwrap();
        assert_eq!(passed, small);

        // A response the SDK writes in two pieces is not split by the refusal.
        pipes.responses.write_all(b"{\"id\":6,").await.unwrap();
        tokio::task::yield_now().await;
        pipes
            .responses
            .write_all(b"\"result\":{}}\n")
            .await
            .unwrap();
        drop(pipes.responses);
        pipes.writer.await.unwrap();

        let mut out = String::new();
        client_out.read_to_string(&mut out).await.unwrap();
        let lines: Vec<Value> = out
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{out}");
        let refusal = lines.iter().find(|m| m["id"] == 5).expect("answered");
        assert_eq!(refusal["error"]["code"], -32600);
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(message.contains("limit of 100 bytes"), "{message}");
        assert!(
            message.contains(&format!("{} bytes", big.len())),
            "{message}"
        );
        assert!(
            lines
                .iter()
                .any(|m| m["id"] == 6 && m["result"].is_object())
        );
    }
}
