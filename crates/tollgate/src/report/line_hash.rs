//! GitHub's `primaryLocationLineHash`: a port of `hash` in github/codeql-action `src/fingerprints.ts`.
//!
//! GitHub recomputes this value from the checkout when `upload-sarif` runs and warns about an
//! "inconsistent fingerprint" when ours differs, so every detail below mirrors the TypeScript:
//! the text is walked as UTF-16 code units; spaces and tabs are skipped; CR counts as LF and an LF
//! right after a CR is skipped; a rolling hash over the last 100 retained code units (wrapping
//! 64-bit arithmetic, like `Long`) is emitted for a line once the line's first code unit has left
//! the window; an EOF marker (65535) and 100 zero code units flush the tail. The value is the
//! unsigned hash in lowercase hex without zero padding, then `:` and the 1-based count of earlier
//! lines with the same hash.

use std::collections::HashMap;

const BLOCK_SIZE: usize = 100;
const MOD: u64 = 37;
const EOF: u16 = 65535;
const TAB: u16 = b'\t' as u16;
const SPACE: u16 = b' ' as u16;
const LF: u16 = b'\n' as u16;
const CR: u16 = b'\r' as u16;

/// The `primaryLocationLineHash` of every line of `text`: index `i` holds line `i + 1`.
///
/// A text ending in a newline has one more entry, for the (empty) line after it, as GitHub
/// computes it; the empty text has one entry.
pub fn line_hashes(text: &str) -> Vec<String> {
    line_hash_values(text)
        .into_iter()
        .map(format_line_hash)
        .collect()
}

/// [`line_hashes`] before formatting: (hash, occurrence) per line. A SARIF report needs the
/// hashes of a few lines per file, so only those are formatted.
pub(crate) fn line_hash_values(text: &str) -> Vec<(u64, u32)> {
    let mut hasher = RollingHasher::new();
    for unit in text.encode_utf16() {
        hasher.process(unit);
    }
    hasher.process(EOF);
    hasher.finish()
}

/// One line's `primaryLocationLineHash` as GitHub writes it.
pub(crate) fn format_line_hash((hash, count): (u64, u32)) -> String {
    format!("{hash:x}:{count}")
}

struct RollingHasher {
    /// The last `BLOCK_SIZE` retained code units; `index` is the oldest one.
    window: [u16; BLOCK_SIZE],
    /// The line that starts at each window slot, if one does.
    line_numbers: [Option<usize>; BLOCK_SIZE],
    index: usize,
    hash: u64,
    /// 37^100, the weight of the code unit that leaves the window.
    first_mod: u64,
    line_number: usize,
    line_start: bool,
    prev_cr: bool,
    hash_counts: HashMap<u64, u32>,
    hashes: Vec<(u64, u32)>,
}

impl RollingHasher {
    fn new() -> RollingHasher {
        let first_mod = (0..BLOCK_SIZE).fold(1u64, |acc, _| acc.wrapping_mul(MOD));
        RollingHasher {
            window: [0; BLOCK_SIZE],
            line_numbers: [None; BLOCK_SIZE],
            index: 0,
            hash: 0,
            first_mod,
            line_number: 0,
            line_start: true,
            prev_cr: false,
            hash_counts: HashMap::new(),
            hashes: Vec::new(),
        }
    }

    fn process(&mut self, unit: u16) {
        if unit == SPACE || unit == TAB || (self.prev_cr && unit == LF) {
            self.prev_cr = false;
            return;
        }
        let unit = if unit == CR {
            self.prev_cr = true;
            LF
        } else {
            self.prev_cr = false;
            unit
        };
        if self.line_numbers[self.index].is_some() {
            self.output_hash();
        }
        if self.line_start {
            self.line_start = false;
            self.line_number += 1;
            self.line_numbers[self.index] = Some(self.line_number);
        }
        if unit == LF {
            self.line_start = true;
        }
        self.update_hash(unit);
    }

    fn update_hash(&mut self, unit: u16) {
        let leaving = self.window[self.index];
        self.window[self.index] = unit;
        self.hash = MOD
            .wrapping_mul(self.hash)
            .wrapping_add(u64::from(unit))
            .wrapping_sub(self.first_mod.wrapping_mul(u64::from(leaving)));
        // A compare instead of `%`: this runs for every code unit of the file.
        self.index += 1;
        if self.index == BLOCK_SIZE {
            self.index = 0;
        }
    }

    fn output_hash(&mut self) {
        let count = self.hash_counts.entry(self.hash).or_insert(0);
        *count += 1;
        // Lines leave the window in the order they started, so pushing keeps `index = line - 1`.
        debug_assert_eq!(
            self.line_numbers[self.index],
            Some(self.hashes.len() + 1),
            "lines are emitted in order"
        );
        self.hashes.push((self.hash, *count));
        self.line_numbers[self.index] = None;
    }

    fn finish(mut self) -> Vec<(u64, u32)> {
        for _ in 0..BLOCK_SIZE {
            if self.line_numbers[self.index].is_some() {
                self.output_hash();
            }
            self.update_hash(0);
        }
        self.hashes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_codeql_action_vector_for_a_rust_file() {
        let text = "fn main() {\n    let x = 1;\n    // TODO fix\n    println!(\"{}\", x);\n}\n";
        assert_eq!(
            line_hashes(text),
            [
                "61f6257fafbc3b5c:1",
                "1733e6f9dcc2c649:1",
                "17a9053b35b43621:1",
                "d8d00433a7425180:1",
                "32dce9ccfdbc9d3e:1",
                "c129715d7a2bc9a3:1",
            ]
        );
    }

    #[test]
    fn crlf_counts_as_one_newline() {
        let expected = [
            "81b8d8db678b2bbe:1",
            "ade70578248be16f:1",
            "c129715d7a2bc9a3:1",
        ];
        assert_eq!(line_hashes("a\r\nb\n"), expected);
        assert_eq!(line_hashes("a\nb\n"), expected);
        // A lone CR is a line break too.
        assert_eq!(line_hashes("a\rb\n"), expected);
    }

    #[test]
    fn spaces_and_tabs_do_not_change_the_hash() {
        assert_eq!(line_hashes("a\nb\n"), line_hashes("  a\n\tb \n"));
    }

    #[test]
    fn repeated_hashes_count_occurrences() {
        // Identical trailing content hashes identically; the suffix tells them apart.
        // With 100+ identical lines, the windows of two lines hold the same code units.
        let text = "x\n".repeat(120);
        let hashes = line_hashes(&text);
        assert_eq!(hashes.len(), 121);
        let (first_hex, _) = hashes[0].split_once(':').unwrap();
        let repeats: Vec<&String> = hashes
            .iter()
            .filter(|hash| hash.split_once(':').unwrap().0 == first_hex)
            .collect();
        assert!(repeats.len() > 1, "{hashes:?}");
        assert!(repeats[1].ends_with(":2"), "{repeats:?}");
        // The empty text has one (virtual) line, hashed like the line after a final newline.
        assert_eq!(line_hashes(""), ["c129715d7a2bc9a3:1"]);
    }

    #[test]
    fn long_lines_and_non_bmp_text_hash_without_panicking() {
        let long_line = "é".repeat(500) + "\n🦀🦀\n";
        let hashes = line_hashes(&long_line);
        assert_eq!(hashes.len(), 3);
        for hash in &hashes {
            let (hex, count) = hash.split_once(':').expect("hash:count");
            assert!(
                !hex.is_empty()
                    && hex
                        .chars()
                        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            );
            assert_eq!(count, "1");
        }
    }
}
