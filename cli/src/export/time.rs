//! Times: the `--after`/`--before` filter, a message's `created` as the filter and the
//! renderers read it, and the export's own time, as pure functions.

use std::borrow::Cow;

use jiff::Timestamp;

/// Now, as `2024-01-15T15:21:44Z` (whole seconds, UTC).
pub(super) fn now_rfc3339() -> String {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}

/// The time of `--after`/`--before`'s argument, as the guide documents it: RFC 3339
/// (`2024-01-15T15:21:44.293Z`, `2024-01-15T16:21:44+01:00`, `T` or a space between date and
/// time, seconds and their fraction optional, no zone meaning UTC: `2024-01-15 15:21`) or a
/// date (`2024-01-15`, midnight UTC); blanks around it ignored. Anything else, a date that
/// does not exist included, is `None`. A pure function of its text: it never panics (the
/// fuzz target calls it with any input).
pub fn parse_time(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    if !documented_shape(text.as_bytes(), Zone::Optional) {
        return None;
    }
    // The shape is checked; jiff does the calendar (days of the month, leap years, offsets).
    let text = &*nanosecond_fraction(text);
    if let Ok(at) = text.parse::<Timestamp>() {
        return Some(at);
    }
    let civil: jiff::civil::DateTime = text.parse().ok()?;
    jiff::tz::Offset::UTC.to_timestamp(civil).ok()
}

/// The time of a message's `created` when it is a JSON string: the one rule the filter and
/// the renderers share. A time is RFC 3339 with its offset, the shape [`parse_time`] reads
/// with the zone required (`Z`, `z` or `±hh:mm`; `T`, `t` or a space; seconds optional; any
/// number of fraction digits, those past the ninth dropped), nothing around it. Anything else
/// (a date alone, no zone, jiff's wider grammar: `+01`, `[Europe/Paris]`, `,5`, `+002020-…`,
/// the basic format) is `None`: shown as sent, and kept by the filter.
pub(crate) fn created_time(text: &str) -> Option<Timestamp> {
    if !documented_shape(text.as_bytes(), Zone::Required) {
        return None;
    }
    nanosecond_fraction(text).parse().ok()
}

/// Whether [`documented_shape`] accepts a time without a zone (and a date alone).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Zone {
    /// `--after`/`--before`: none means UTC.
    Optional,
    /// A message's `created`: a time with no zone is not one.
    Required,
}

/// Whether `b` is `YYYY-MM-DD`, optionally followed by `T`, `t` or a space and `hh:mm`,
/// optionally `:ss` and a fraction of one digit or more, and a zone `Z`, `z` or `±hh:mm` (or
/// none, when `zone` is optional): what the guide documents, so that jiff's wider grammar
/// (week dates, `[zone]` annotations, basic format) is not accepted by accident.
fn documented_shape(b: &[u8], zone: Zone) -> bool {
    let digits = |at: usize, n: usize| {
        b.get(at..at + n)
            .is_some_and(|s| s.iter().all(u8::is_ascii_digit))
    };
    let byte = |at: usize| b.get(at).copied();
    if !(digits(0, 4)
        && byte(4) == Some(b'-')
        && digits(5, 2)
        && byte(7) == Some(b'-')
        && digits(8, 2))
    {
        return false;
    }
    if b.len() == 10 {
        return zone == Zone::Optional;
    }
    if !matches!(byte(10), Some(b'T' | b't' | b' ')) {
        return false;
    }
    if !(digits(11, 2) && byte(13) == Some(b':') && digits(14, 2)) {
        return false;
    }
    let mut at = 16;
    if byte(at) == Some(b':') {
        if !digits(at + 1, 2) {
            return false;
        }
        at += 3;
        if byte(at) == Some(b'.') {
            let fraction = b[at + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if fraction == 0 {
                return false;
            }
            at += 1 + fraction;
        }
    }
    match &b[at..] {
        [] => zone == Zone::Optional,
        [b'Z'] | [b'z'] => true,
        [b'+' | b'-', offset @ ..] => {
            offset.len() == 5
                && offset[2] == b':'
                && [0, 1, 3, 4].iter().all(|&i| offset[i].is_ascii_digit())
        }
        _ => false,
    }
}

/// `text` without the digits of its fraction of a second past the ninth: RFC 3339 puts no
/// limit on them, jiff reads nanoseconds at most (and refused the whole time).
pub(super) fn nanosecond_fraction(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let Some(dot) = b.iter().position(|&c| c == b'.') else {
        return Cow::Borrowed(text);
    };
    let digits = b[dot + 1..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits <= 9 {
        return Cow::Borrowed(text);
    }
    // ASCII digits: the cuts are on character boundaries.
    Cow::Owned([&text[..dot + 10], &text[dot + 1 + digits..]].concat())
}

/// An epoch number from this (in absolute value) counts milliseconds, below it seconds:
/// 10^11 seconds is the year 5138, 10^11 milliseconds March 1973.
pub(super) const EPOCH_MILLISECONDS_FROM: i64 = 100_000_000_000;

/// A JSON number of seconds or milliseconds since 1970 (fractions and exponents included),
/// read from its text exactly, with no floating point: `1705332104.293`,
/// `1705332104293.0` and `1.705332104293e12` are all `…44.293` to the nanosecond. Below
/// [`EPOCH_MILLISECONDS_FROM`] in absolute value (compared exactly) it counts seconds, from it
/// milliseconds. Digits past the nanosecond are dropped toward the earlier time (the floor:
/// `-0.0000000005` is one nanosecond before 1970), as a string's fraction past its ninth
/// digit is. `-0` is 1970. Anything but a JSON number (`+1`, `.5`, `1.`, `NaN`, blanks), or
/// a time outside jiff's years -9999 to 9999 (`1e400`), is `None`.
pub(super) fn epoch(number: &str) -> Option<Timestamp> {
    let nanoseconds = exact_nanoseconds(number)?;
    Timestamp::from_nanosecond(nanoseconds).ok()
}

/// The nanoseconds since 1970 of an epoch number's text (see [`epoch`]); `None` when it is
/// not a JSON number, or too far from 1970 for an `i128` of nanoseconds (far beyond jiff's
/// range, which [`epoch`] then checks).
fn exact_nanoseconds(number: &str) -> Option<i128> {
    // The JSON grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    let b = number.as_bytes();
    let negative = b.first() == Some(&b'-');
    let rest = &b[usize::from(negative)..];
    let count = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
    let int_len = count(rest);
    if int_len == 0 || (int_len > 1 && rest[0] == b'0') {
        return None;
    }
    let (int, rest) = rest.split_at(int_len);
    let (fraction, rest) = match rest.split_first() {
        Some((b'.', after)) => {
            let n = count(after);
            if n == 0 {
                return None;
            }
            after.split_at(n)
        }
        _ => (&rest[..0], rest),
    };
    // The exponent, saturated far beyond any time (its digits may be as many as sent).
    const FAR: i64 = 1 << 40;
    let exponent = match rest.split_first() {
        None => 0,
        Some((b'e' | b'E', after)) => {
            let (sign, digits) = match after.split_first() {
                Some((b'-', d)) => (-1, d),
                Some((b'+', d)) => (1, d),
                _ => (1, after),
            };
            if digits.is_empty() || count(digits) != digits.len() {
                return None;
            }
            let magnitude = digits
                .iter()
                .try_fold(0i64, |n, d| {
                    n.checked_mul(10)?.checked_add(i64::from(d - b'0'))
                })
                .map_or(FAR, |n| n.min(FAR));
            sign * magnitude
        }
        Some(_) => return None,
    };
    // The value is `significand × 10^scale`, the significand's digits without the zeros
    // that lead or trail them.
    let all: Vec<u8> = int.iter().chain(fraction).copied().collect();
    let leading = all.iter().take_while(|&&d| d == b'0').count();
    let trailing = all[leading..]
        .iter()
        .rev()
        .take_while(|&&d| d == b'0')
        .count();
    let significand = &all[leading..all.len() - trailing];
    if significand.is_empty() {
        return Some(0); // 0, -0, 0.000e99
    }
    let digits = i64::try_from(significand.len()).ok()?;
    let fraction_len = i64::try_from(fraction.len()).ok()?;
    let scale = exponent - fraction_len + i64::try_from(trailing).ok()?;
    // |value| = 0.significand × 10^(digits + scale), 0.significand in [0.1, 1): it is below
    // 10^11 exactly when it has at most 11 digits before the point.
    let milliseconds = digits + scale > EPOCH_MILLISECONDS_FROM.ilog10().into();
    let to_nanoseconds = scale + if milliseconds { 6 } else { 9 };
    // Keep the digits before the nanosecond's point: at most 30 (10^30 ns is 3 × 10^13
    // years, far beyond any time; an i128 holds 38).
    let whole_digits = digits + to_nanoseconds;
    if whole_digits > 30 {
        return None;
    }
    let kept = &significand[..usize::try_from(whole_digits.clamp(0, digits)).ok()?];
    // Digits were dropped past the nanosecond (the significand's last digit is not a zero).
    let dropped = whole_digits < digits;
    let mut n = kept
        .iter()
        .fold(0i128, |n, d| n * 10 + i128::from(d - b'0'));
    if to_nanoseconds > 0 {
        n *= 10i128.pow(u32::try_from(to_nanoseconds).ok()?);
    }
    Some(if negative {
        -n - i128::from(dropped)
    } else {
        n
    })
}

/// A message's `created` as its record holds it (see `record::head`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Created<'a> {
    /// A JSON string's text.
    Text(Cow<'a, str>),
    /// A JSON number's text: seconds or milliseconds since 1970, as the renderers read it.
    Number(&'a str),
}

impl Created<'_> {
    /// Its time, when it has one: a string as [`created_time`] reads it (as the renderers
    /// do), a number as [`epoch`] reads it.
    pub(crate) fn time(&self) -> Option<Timestamp> {
        match self {
            Created::Text(text) => created_time(text),
            Created::Number(number) => epoch(number),
        }
    }
}

/// Whether a time filter of `after` and `before` keeps a message created at `created`,
/// compared to the nanosecond (one without a time is kept: the filter cannot place it).
pub(crate) fn keep(
    after: Option<Timestamp>,
    before: Option<Timestamp>,
    created: Option<&Created<'_>>,
) -> bool {
    if after.is_none() && before.is_none() {
        return true;
    }
    let Some(at) = created.and_then(Created::time) else {
        return true;
    };
    after.is_none_or(|a| at > a) && before.is_none_or(|b| at < b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        let ms = |t: &str| parse_time(t).map(|t| t.as_millisecond());
        assert_eq!(ms("1970-01-01"), Some(0));
        assert_eq!(ms(" 1970-01-01 "), Some(0));
        assert_eq!(ms("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(ms("2024-01-15T15:21:44.293Z"), Some(1_705_332_104_293));
        assert_eq!(ms("2024-01-15t15:21:44.293z"), Some(1_705_332_104_293));
        assert_eq!(ms("2024-01-15T16:21:44.293+01:00"), Some(1_705_332_104_293));
        assert_eq!(
            ms("2024-01-15T14:21:44.293456789-01:00"),
            Some(1_705_332_104_293)
        );
        // RFC 3339 sets no limit to a fraction's digits: those past the ninth are dropped.
        assert_eq!(
            ms("2024-01-15T15:21:44.2934567891234Z"),
            Some(1_705_332_104_293)
        );
        assert_eq!(
            nanosecond_fraction("2024-01-15T15:21:44.1234567891+01:00"),
            "2024-01-15T15:21:44.123456789+01:00"
        );
        assert_eq!(ms("2024-01-15 15:21"), Some(1_705_332_060_000));
        assert_eq!(ms("2024-01-15T15:21Z"), Some(1_705_332_060_000));
        assert_eq!(ms("2024-02-29"), Some(1_709_164_800_000));
        // To the nanosecond (a fraction of a millisecond is not dropped).
        assert_eq!(
            parse_time("2024-01-15T14:21:44.293456789-01:00").map(|t| t.as_nanosecond()),
            Some(1_705_332_104_293_456_789)
        );
        for bad in [
            "yesterday",
            "",
            "2024-13-01",
            "2023-02-29",
            "2024-01-32",
            "2024-01-15T24:00Z",
            "2024-01-15T15:60Z",
            "2024-01-15T15",
            "2024-01-15T15:21:44.Z",
            "2024-01-15T15:21:44+01",
            "2024-01-15T15:21:44+0100",
            "2024-01-15T15:21:44Z[Europe/Paris]",
            "20240115",
            "2024-W03-1",
            "+002024-01-15",
            "2024-01-15x",
        ] {
            assert_eq!(parse_time(bad), None, "{bad:?}");
        }
    }

    /// Any text is a time or `None`, never a panic: non-ASCII characters at every position
    /// of the documented shapes (the hand-written parser this replaced sliced strings by
    /// byte and panicked on `2024-01-1é`).
    #[test]
    fn non_ascii_text_is_not_a_time_and_no_panic() {
        let shapes = [
            "2024-01-15",
            "2024-01-15T15:21:44.293Z",
            "2024-01-15T16:21:44+01:00",
            "2024-01-15 15:21",
        ];
        for shape in shapes {
            for at in 0..=shape.len() {
                for odd in ["é", "中", "\u{0}", "\u{202e}", "１"] {
                    let text = format!("{}{odd}{}", &shape[..at], &shape[at..]);
                    assert_eq!(parse_time(&text), None, "{text:?}");
                    assert_eq!(created_time(&text), None, "{text:?}");
                    let replaced =
                        format!("{}{odd}{}", &shape[..at.saturating_sub(1)], &shape[at..]);
                    let _ = parse_time(&replaced);
                }
            }
        }
        assert_eq!(parse_time("2024-01-1é"), None);
    }

    #[test]
    fn the_filter_keeps_what_it_cannot_place() {
        let day = |d: &str| parse_time(d);
        let (after, before) = (day("2024-01-05"), day("2024-01-10"));
        let text = |t: &'static str| Created::Text(t.into());
        assert!(keep(after, before, Some(&text("2024-01-06T00:00:00Z"))));
        // A date alone is not a message's time (no zone): kept, as shown as sent.
        assert!(keep(after, before, Some(&text("2024-01-05"))));
        assert!(!keep(after, before, Some(&text("2024-01-05T00:00:00Z"))));
        assert!(!keep(after, before, Some(&text("2024-01-10T00:00:00Z"))));
        assert!(keep(after, before, Some(&text("2024-01-1é"))));
        assert!(keep(after, before, None));
        assert!(keep(None, None, Some(&text("2024-01-01"))));
        // More than nine digits of a second: the tenth on dropped, the time kept.
        assert!(keep(
            after,
            before,
            Some(&text("2024-01-06T00:00:00.1234567891Z"))
        ));
        assert!(!keep(
            after,
            before,
            Some(&text("2024-01-10T00:00:00.0000000001Z"))
        ));
        // Numbers: seconds, or milliseconds from 10^11 (2024-01-06 and 2024-01-10 here).
        assert!(keep(after, before, Some(&Created::Number("1704499200"))));
        assert!(keep(after, before, Some(&Created::Number("1704499200000"))));
        assert!(!keep(
            after,
            before,
            Some(&Created::Number("1704844800000"))
        ));
        assert!(!keep(after, before, Some(&Created::Number("1.7048448e9"))));
        assert!(keep(after, before, Some(&Created::Number("1e400"))));
    }

    #[test]
    fn strictly_after_and_before_to_the_nanosecond() {
        let at = |t: &str| parse_time(t);
        let text = |t: &'static str| Created::Text(t.into());
        let after = at("2024-01-06T00:00:00Z");
        assert!(keep(after, None, Some(&text("2024-01-06T00:00:00.0005Z"))));
        assert!(keep(
            after,
            None,
            Some(&text("2024-01-06T00:00:00.000000001Z"))
        ));
        assert!(!keep(
            after,
            None,
            Some(&text("2024-01-06T00:00:00.000000000Z"))
        ));
        assert!(keep(after, None, Some(&Created::Number("1704499200000.5"))));
        // The argument's fraction counts too.
        let after = at("2024-01-06T00:00:00.0001Z");
        assert!(keep(after, None, Some(&text("2024-01-06T00:00:00.0005Z"))));
        assert!(!keep(after, None, Some(&text("2024-01-06T00:00:00.0001Z"))));
        // Before 1970: as_millisecond truncated toward zero, to 1970 itself.
        let before = at("1970-01-01");
        assert!(keep(None, before, Some(&text("1969-12-31T23:59:59.9995Z"))));
    }

    /// A message's `created` string is a time only as RFC 3339 with its offset; the argument
    /// of `--after` also reads a date alone and no zone as UTC.
    #[test]
    fn a_created_string_is_a_time_only_with_its_zone() {
        let ns = |t: &str| created_time(t).map(|t| t.as_nanosecond());
        for (text, at) in [
            ("2024-01-15T15:21:44.293Z", 1_705_332_104_293_000_000),
            ("2024-01-15t15:21:44.293z", 1_705_332_104_293_000_000),
            ("2024-01-15 16:21:44.293+01:00", 1_705_332_104_293_000_000),
            ("2024-01-15T15:21Z", 1_705_332_060_000_000_000),
            (
                "2024-01-15T15:21:44.2934567891234Z",
                1_705_332_104_293_456_789,
            ),
        ] {
            assert_eq!(ns(text), Some(at), "{text:?}");
            assert_eq!(parse_time(text).map(|t| t.as_nanosecond()), Some(at));
        }
        for not_a_time in [
            "2024-01-15",
            "2024-01-15 15:21",
            "2024-01-15T15:21:44",
            " 2024-01-15T15:21:44Z",
            "2020-01-01T00:00:00+01",
            "2020-01-01T00:00:00Z[Europe/Paris]",
            "2020-01-01T00:00:00,5Z",
            "+002020-01-01T00:00:00Z",
            "20200101T000000Z",
            "2024-01-32T00:00:00Z",
        ] {
            assert_eq!(ns(not_a_time), None, "{not_a_time:?}");
        }
        assert!(parse_time("2024-01-15").is_some() && parse_time("2024-01-15 15:21").is_some());
    }

    /// A number's text read exactly, to the nanosecond, with no floating point (issue 51,
    /// item 9: `1705332104.293` read through an f64 was `…44.292999983`).
    #[test]
    fn epoch_numbers_are_read_exactly() {
        const AT: i128 = 1_705_332_104_293_000_000; // 2024-01-15T15:21:44.293Z
        let ns = |n: &str| epoch(n).map(|t| t.as_nanosecond());
        for (number, at) in [
            ("1705332104293", AT),
            ("1705332104293.0", AT),
            ("1705332104.293", AT),
            ("1.705332104293e12", AT),
            ("1.705332104293E+12", AT),
            ("17053321042930e-1", AT),
            ("0.1705332104293e13", AT),
            ("1705332104293000000e-6", AT),
            ("1705332104.2930001", AT + 100),
            ("1705332104.293000001", AT + 1),
            // Digits past the nanosecond are dropped toward the earlier time (the floor).
            ("1705332104.2930000009", AT),
            ("1705332104.29300000099999999999999999999999999999", AT),
            ("-1705332104.293", -AT),
            ("-1705332104.2930000001", -AT - 1),
            ("1704499200000.5", 1_704_499_200_000_500_000),
            // Seconds below 10^11 (compared exactly), milliseconds from it.
            ("99999999999", 99_999_999_999_000_000_000),
            ("99999999999.999999999999", 99_999_999_999_999_999_999),
            ("100000000000", 100_000_000_000_000_000),
            ("1e11", 100_000_000_000_000_000),
            ("0.1e12", 100_000_000_000_000_000),
            ("-1e11", -100_000_000_000_000_000),
            ("-99999999999", -99_999_999_999_000_000_000),
            // Zero, signed or not, and the smallest steps.
            ("0", 0),
            ("-0", 0),
            ("-0.0", 0),
            ("0e999999", 0),
            ("0.000e-99999999999999999999999", 0),
            ("1e-9", 1),
            ("-1e-9", -1),
            ("1e-10", 0),
            ("-1e-10", -1),
            ("-0.0000000005", -1),
            ("1e-400", 0),
            ("-1e-99999999999999999999999", -1),
            ("1e9", 1_000_000_000_000_000_000),
        ] {
            assert_eq!(ns(number), Some(at), "{number:?}");
        }
        // Beyond jiff's years -9999 to 9999, or not a JSON number.
        for none in [
            "1e400",
            "-1e400",
            "1e99999999999999999999999",
            "1e20",
            "-1e20",
            "123456789012345678901234567890123456789012345678901234567890",
            "",
            "-",
            "+1",
            ".5",
            "1.",
            "01",
            "-01",
            "1e",
            "1e+",
            "1e-",
            "1.e5",
            "1.5e5x",
            "NaN",
            "inf",
            "-inf",
            " 1",
            "1 ",
            "0x10",
            "1_000",
            "١",
        ] {
            assert_eq!(ns(none), None, "{none:?}");
        }
        // The bound the issue named: equal to `--before`, dropped; 100 ns after `--after`, kept.
        let bound = parse_time("2024-01-15T15:21:44.293Z");
        for equal in ["1705332104293.0", "1705332104.293", "1.705332104293e12"] {
            assert!(!keep(None, bound, Some(&Created::Number(equal))), "{equal}");
            assert!(!keep(bound, None, Some(&Created::Number(equal))), "{equal}");
        }
        assert!(keep(
            bound,
            None,
            Some(&Created::Number("1705332104.2930001"))
        ));
    }

    #[test]
    fn now_is_whole_seconds_in_utc() {
        let now = now_rfc3339();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.ends_with('Z'), "{now}");
        assert!(parse_time(&now).is_some(), "{now}");
    }
}
