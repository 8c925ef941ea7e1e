//! The one way Tollgate writes "now": RFC 3339 in UTC with milliseconds, as the store, the plans,
//! the ledger and the reports record it (ground floor: imports nothing from the crate).

/// Now, as recorded: RFC 3339 UTC with milliseconds (`2026-11-27T05:01:02.345Z`).
pub fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    let now = now
        .replace_nanosecond(now.nanosecond() / 1_000_000 * 1_000_000)
        .unwrap_or(now);
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_utc_rfc3339_with_at_most_milliseconds() {
        let now = now_rfc3339();
        let parsed =
            time::OffsetDateTime::parse(&now, &time::format_description::well_known::Rfc3339)
                .unwrap();
        assert_eq!(parsed.offset(), time::UtcOffset::UTC);
        assert_eq!(parsed.nanosecond() % 1_000_000, 0, "{now}");
        assert!(now.ends_with('Z'), "{now}");
    }
}
