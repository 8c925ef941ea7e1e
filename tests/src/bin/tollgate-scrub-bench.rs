//! `tollgate-scrub-bench`: secret-scrubbing throughput (MB/s) of `tollgate::secrets::scrub` on a
//! large generated mixed file (source code, configuration, logs, base64 blobs, look-alikes, and
//! a secret every few hundred lines), beside a baseline pass over the same bytes (counting
//! newlines) timed in the same loop.
//!
//! ```text
//! cargo run --release -p tollgate-tests --bin tollgate-scrub-bench -- [--mb 32] [--runs 7]
//! ```

#![allow(clippy::print_stdout, reason = "a bench command reports on stdout")]

use std::time::Instant;

use anyhow::Context;

fn main() -> anyhow::Result<()> {
    let mut mb = 32usize;
    let mut runs = 7usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().context("every option takes a value")?;
        match arg.as_str() {
            "--mb" => mb = value.parse().context("--mb")?,
            "--runs" => runs = value.parse().context("--runs")?,
            other => anyhow::bail!("unknown option {other}"),
        }
    }
    let text = generate(mb * 1024 * 1024);
    let size_mb = text.len() as f64 / (1024.0 * 1024.0);
    let mut scrub_secs = Vec::new();
    let mut baseline_secs = Vec::new();
    let mut n_secrets = 0;
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        let lines = text.bytes().filter(|b| *b == b'\n').count();
        baseline_secs.push(started.elapsed().as_secs_f64());
        std::hint::black_box(lines);
        let started = Instant::now();
        let scrubbed = tollgate::secrets::scrub(&text, 0, 0);
        scrub_secs.push(started.elapsed().as_secs_f64());
        n_secrets = scrubbed.secrets.len();
        std::hint::black_box(scrubbed.text.len());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let scrub = median(&mut scrub_secs);
    let baseline = median(&mut baseline_secs);
    println!(
        "| input | runs | secrets found | scrub median | scrub MB/s | newline-count baseline MB/s |"
    );
    println!("|---|---|---|---|---|---|");
    println!(
        "| {size_mb:.1} MB mixed | {} | {n_secrets} | {:.1} ms | {:.1} | {:.0} |",
        scrub_secs.len(),
        scrub * 1000.0,
        size_mb / scrub,
        size_mb / baseline
    );
    Ok(())
}

/// Deterministic mixed text of about `bytes` bytes.
fn generate(bytes: usize) -> String {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut rand = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let word = |rand: &mut dyn FnMut(usize) -> usize, n: usize| -> String {
        (0..n).map(|_| ALNUM[rand(ALNUM.len())] as char).collect()
    };
    let mut out = String::with_capacity(bytes + 256);
    let mut line_no = 0usize;
    while out.len() < bytes {
        line_no += 1;
        let line = match line_no % 12 {
            0 => format!("    let value_{line_no} = compute(&input, {});", rand(1000)),
            1 => format!("fn handler_{line_no}(req: &Request) -> Result<Response, Error> {{"),
            2 => format!(
                "// {} {} {}",
                word(&mut rand, 6),
                word(&mut rand, 8),
                word(&mut rand, 5)
            ),
            3 => format!("timeout_ms = {}", rand(60_000)),
            4 => format!(
                "2026-11-21T10:{:02}:00Z INFO request id={} status=200",
                rand(60),
                word(&mut rand, 16)
            ),
            5 => format!("api_key = os.environ[\"API_KEY_{line_no}\"]"),
            6 => format!("data:image/png;base64,{}", word(&mut rand, 120)),
            7 => format!("commit {}", word(&mut rand, 40).to_lowercase()),
            8 => format!(
                "token_url = \"https://auth.example.com/{}\"",
                word(&mut rand, 10)
            ),
            9 => format!("    assert_eq!(result.len(), {});", rand(100)),
            10 => "}".to_string(),
            _ if line_no % 300 == 11 => {
                format!("GITHUB_TOKEN=gh{}_{}", "p", word(&mut rand, 36))
            }
            _ => format!("password_hint = \"{}\"", word(&mut rand, 8)),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}
