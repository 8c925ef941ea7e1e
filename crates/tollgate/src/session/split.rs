//! Splitting a pull request into steps: groups of files balanced by changed lines.
//!
//! Longest-processing-time-first: files sorted by changed lines (largest first) go one by one to
//! the group with the fewest lines so far, which keeps the largest group within 4/3 of the best
//! possible balance. The result is deterministic (ties break by path and group index).

/// Limits on one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepLimits {
    /// At most this many files per step (at least 1).
    pub max_files: usize,
    /// Aim for at most this many changed lines per step (a larger single file is its own step).
    pub max_lines: u64,
}

/// One group of files and their changed lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileGroup {
    pub(crate) files: Vec<String>,
    pub(crate) changed_lines: u64,
}

/// Splits `files` (path, changed lines) into balanced groups; each group's files are sorted
/// by path and groups are ordered by their first path.
pub(crate) fn split(files: &[(String, u64)], limits: StepLimits) -> Vec<FileGroup> {
    if files.is_empty() {
        return Vec::new();
    }
    let max_files = limits.max_files.max(1);
    let total_lines: u64 = files.iter().map(|(_, lines)| *lines).sum();
    let by_files = files.len().div_ceil(max_files);
    let by_lines =
        usize::try_from(total_lines.div_ceil(limits.max_lines.max(1))).unwrap_or(usize::MAX);
    let n_groups = by_files.max(by_lines).clamp(1, files.len());

    let mut order: Vec<&(String, u64)> = files.iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut groups = vec![
        FileGroup {
            files: Vec::new(),
            changed_lines: 0,
        };
        n_groups
    ];
    for (path, lines) in order {
        // The lightest group that still has room for a file; one always has, since
        // n_groups * max_files >= files.len().
        let target = groups
            .iter_mut()
            .filter(|group| group.files.len() < max_files)
            .min_by_key(|group| (group.changed_lines, group.files.len()));
        if let Some(group) = target {
            group.files.push(path.clone());
            group.changed_lines += lines;
        }
    }
    groups.retain(|group| !group.files.is_empty());
    for group in &mut groups {
        group.files.sort();
    }
    groups.sort_by(|a, b| a.files.cmp(&b.files));
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(spec: &[(&str, u64)]) -> Vec<(String, u64)> {
        spec.iter().map(|(p, n)| (p.to_string(), *n)).collect()
    }

    #[test]
    fn groups_are_balanced_by_lines_and_respect_the_file_limit() {
        let input = files(&[
            ("a", 100),
            ("b", 90),
            ("c", 10),
            ("d", 10),
            ("e", 5),
            ("f", 5),
        ]);
        let groups = split(
            &input,
            StepLimits {
                max_files: 3,
                max_lines: 1000,
            },
        );
        assert_eq!(groups.len(), 2);
        let lines: Vec<u64> = groups.iter().map(|g| g.changed_lines).collect();
        assert_eq!(lines.iter().sum::<u64>(), 220);
        // Within the smallest file of a perfect 110/110 split.
        assert!(lines.iter().all(|n| n.abs_diff(110) <= 5), "{lines:?}");
        assert!(groups.iter().all(|g| g.files.len() <= 3));
        let mut all: Vec<&String> = groups.iter().flat_map(|g| &g.files).collect();
        all.sort();
        assert_eq!(all.len(), 6);
    }

    #[test]
    fn many_lines_make_more_steps_and_a_big_file_stays_whole() {
        let input = files(&[("big", 900), ("x", 50), ("y", 50)]);
        let groups = split(
            &input,
            StepLimits {
                max_files: 10,
                max_lines: 400,
            },
        );
        assert_eq!(groups.len(), 3);
        assert!(groups.iter().any(|g| g.files == ["big"]));
        assert!(
            split(
                &[],
                StepLimits {
                    max_files: 1,
                    max_lines: 1
                }
            )
            .is_empty()
        );
    }

    #[test]
    fn the_split_is_deterministic() {
        let input = files(&[("m", 3), ("k", 3), ("z", 3), ("a", 3)]);
        let limits = StepLimits {
            max_files: 2,
            max_lines: 100,
        };
        let mut reversed = input.clone();
        reversed.reverse();
        assert_eq!(split(&input, limits), split(&reversed, limits));
    }
}
