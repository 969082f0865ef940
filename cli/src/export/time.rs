//! Times: the `--after`/`--before` filter and the export's own time, as pure functions.

/// Now, as `2024-01-15T15:21:44Z`.
pub(super) fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 from a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Milliseconds since the epoch of an RFC 3339 time (`2024-01-15T15:21:44.293Z`,
/// `2024-01-15T16:21:44+01:00`, `2024-01-15 15:21`) or a date (`2024-01-15`, midnight UTC).
pub fn parse_time(text: &str) -> Option<i64> {
    let t = text.trim();
    let b = t.as_bytes();
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.parse().ok())?
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, mo, d) = (num(&t[..4])?, num(&t[5..7])?, num(&t[8..10])?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, mo, d) * 86_400_000;
    let rest = &t[10..];
    if rest.is_empty() {
        return Some(ms);
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    // hh:mm[:ss[.fff]] then Z, ±hh:mm or nothing (UTC).
    let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let (clock, zone) = rest.split_at(zone_at);
    let mut parts = clock.split(':');
    let h = num(parts.next()?)?;
    let mi = num(parts.next()?)?;
    let (s, frac) = match parts.next() {
        None => (0, 0),
        Some(sec) => {
            let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
            let frac_ms = if frac.is_empty() {
                0
            } else {
                let digits: String = frac.chars().chain("000".chars()).take(3).collect();
                num(&digits)?
            };
            (num(whole)?, frac_ms)
        }
    };
    if parts.next().is_some() || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    ms += ((h * 60 + mi) * 60 + s) * 1000 + frac;
    match zone {
        "" | "Z" | "z" => {}
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let (zh, zm) = z[1..].split_once(':').unwrap_or((&z[1..], "00"));
            ms -= sign * (num(zh)? * 60 + num(zm)?) * 60_000;
        }
    }
    Some(ms)
}

/// Whether a time filter of `after` and `before` (milliseconds since the epoch) keeps a
/// message created at `created` (one without a readable time is kept: the filter cannot place
/// it).
pub(super) fn keep(after: Option<i64>, before: Option<i64>, created: Option<&str>) -> bool {
    if after.is_none() && before.is_none() {
        return true;
    }
    let Some(ms) = created.and_then(parse_time) else {
        return true;
    };
    after.is_none_or(|a| ms > a) && before.is_none_or(|b| ms < b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("1970-01-01"), Some(0));
        assert_eq!(parse_time("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(
            parse_time("2024-01-15T15:21:44.293Z"),
            Some(1_705_332_104_293)
        );
        assert_eq!(
            parse_time("2024-01-15T16:21:44.293+01:00"),
            Some(1_705_332_104_293)
        );
        assert_eq!(parse_time("2024-01-15 15:21"), Some(1_705_332_060_000));
        assert_eq!(parse_time("yesterday"), None);
        assert_eq!(parse_time("2024-13-01"), None);
        assert_eq!(civil_from_days(days_from_civil(2024, 2, 29)), (2024, 2, 29));
    }
}
