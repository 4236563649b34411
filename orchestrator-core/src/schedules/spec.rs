//! A schedule's spec: when its slots are, read in its time zone.
//!
//! Cron expressions are parsed by `croner` rather than `cron`: croner reads
//! the standard five fields (`minute hour day-of-month month day-of-week`,
//! with POSIX day-of-week numbering and the Vixie "either day field" rule),
//! names and the `@hourly`-style macros, while `cron` wants a seconds field
//! (six or seven fields) and numbers weekdays from 1 = Sunday, so a crontab
//! line would mean something else there. croner is configured here to refuse
//! a seconds or a year field, so only standard five-field expressions pass.
//!
//! Daylight saving: croner is asked for the next matching *wall-clock* time
//! (a `NaiveDateTime`, a calendar without zone changes), which is then placed
//! in the zone with `chrono-tz`: a wall time that does not exist (spring
//! forward) becomes the first instant after the gap, and a wall time that
//! occurs twice (fall back) its first occurrence only. So each matching wall
//! time gives exactly one slot, and slots strictly increase.
//!
//! Intervals (`every_seconds`) are absolute time: slots are `anchor + k ×
//! every_seconds`, the anchor being `start_at` or the Unix epoch, so every
//! replica computes the same slots whatever the zone.

use crate::error::{Error, Result};
use chrono::offset::LocalResult;
use chrono::{DateTime, Duration, NaiveDateTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// When a schedule's slots are.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    kind: Kind,
    pub zone: Tz,
}

#[derive(Debug, Clone)]
enum Kind {
    Cron(Box<Cron>),
    Every { seconds: i64, anchor: DateTime<Utc> },
}

/// Parses an IANA zone name (422 naming `timezone` when unknown).
pub(crate) fn zone(name: &str) -> Result<Tz> {
    name.parse::<Tz>().map_err(|_| {
        Error::schema_field(
            "timezone",
            format!("`{name}` is not an IANA time zone name"),
        )
    })
}

/// Parses a five-field cron expression or macro (422 naming `cron`).
fn parse_cron(expression: &str) -> Result<Cron> {
    let text = expression.trim();
    let fields = text.split_whitespace().count();
    if !(text.starts_with('@') && fields == 1) && fields != 5 {
        return Err(Error::schema_field(
            "cron",
            "must be five fields (minute hour day-of-month month day-of-week) or a macro \
             (@hourly @daily @weekly @monthly @yearly)",
        ));
    }
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(text)
        .map_err(|e| Error::schema_field("cron", format!("is not a valid cron expression: {e}")))
}

impl Spec {
    /// The spec of `cron` or `every_seconds` (exactly one; 422 otherwise),
    /// read in `timezone`; intervals are anchored at `start_at`.
    pub(crate) fn new(
        cron: Option<&str>,
        every_seconds: Option<i64>,
        timezone: &str,
        start_at: Option<DateTime<Utc>>,
    ) -> Result<Self> {
        let zone = zone(timezone)?;
        let kind = match (cron, every_seconds) {
            (Some(_), Some(_)) => {
                return Err(Error::schema_field(
                    "every_seconds",
                    "give exactly one of cron and every_seconds, not both",
                ));
            }
            (None, None) => {
                return Err(Error::schema_field(
                    "cron",
                    "give exactly one of cron and every_seconds",
                ));
            }
            (Some(expression), None) => Kind::Cron(Box::new(parse_cron(expression)?)),
            (None, Some(seconds)) => {
                if !(1..=crate::api::schedules::MAX_SCHEDULE_SECONDS).contains(&seconds) {
                    return Err(Error::invalid_field(
                        "every_seconds",
                        "must be 1 to 31,536,000",
                    ));
                }
                Kind::Every {
                    seconds,
                    anchor: start_at.unwrap_or(DateTime::UNIX_EPOCH),
                }
            }
        };
        Ok(Self { kind, zone })
    }

    /// Refuses a cron expression with no date left after `now` (the
    /// control plane's clock): `0 0 30 2 *`, or years that have passed.
    /// Checked where a schedule is written or previewed, not where a
    /// stored row is read back.
    pub(crate) fn check_matches(&self, now: DateTime<Utc>) -> Result<()> {
        if matches!(self.kind, Kind::Cron(_)) && self.next_after(now).is_none() {
            return Err(Error::schema_field("cron", "never matches a date"));
        }
        Ok(())
    }

    /// The first slot strictly after `t`.
    pub(crate) fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match &self.kind {
            Kind::Every { seconds, anchor } => {
                let step = seconds * 1000;
                let since = (t - *anchor).num_milliseconds();
                let k = if since < 0 { 0 } else { since / step + 1 };
                anchor.checked_add_signed(Duration::milliseconds(k * step))
            }
            Kind::Cron(cron) => {
                // Cron slots are whole minutes: search from whole seconds.
                let mut wall = t
                    .with_timezone(&self.zone)
                    .naive_local()
                    .with_nanosecond(0)
                    .unwrap_or_default();
                // Each turn moves `wall` forward; a few turns at most cross a
                // repeated hour.
                for _ in 0..64 {
                    let next = cron.find_next_occurrence(&wall, false).ok()?;
                    let instant = self.place(next);
                    if instant > t {
                        return Some(instant);
                    }
                    wall = next;
                }
                None
            }
        }
    }

    /// The first slot at or after `t`.
    pub(crate) fn at_or_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.next_after(t - Duration::milliseconds(1))
    }

    /// Slots in `[from, to)`, oldest first, at most `cap` of them (`None`
    /// when there are more).
    pub(crate) fn slots_between(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        cap: u64,
    ) -> Option<Vec<DateTime<Utc>>> {
        let mut slots = Vec::new();
        let mut next = self.at_or_after(from);
        while let Some(slot) = next.filter(|s| *s < to) {
            if slots.len() as u64 == cap {
                return None;
            }
            slots.push(slot);
            next = self.next_after(slot);
        }
        Some(slots)
    }

    /// The oldest of the `n` newest slots in `[from, to]` (`None` when
    /// there are none): where an `all` catch-up of at most `n` fires starts.
    pub(crate) fn oldest_of_newest(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        n: u64,
    ) -> Option<DateTime<Utc>> {
        if let Kind::Every { seconds, .. } = self.kind {
            // Slots are evenly spaced: count back from the newest.
            let newest = self.next_after(to)? - Duration::seconds(seconds);
            let oldest = newest - Duration::seconds(seconds * (n as i64 - 1));
            return self.at_or_after(oldest.max(from)).filter(|s| *s <= to);
        }
        let mut kept = std::collections::VecDeque::new();
        let mut next = self.at_or_after(from);
        while let Some(slot) = next.filter(|s| *s <= to) {
            if kept.len() as u64 == n {
                kept.pop_front();
            }
            kept.push_back(slot);
            next = self.next_after(slot);
        }
        kept.front().copied()
    }

    /// The instant of a wall-clock time of the zone: its only instant, the
    /// first of two (fall back), or the first instant after the gap it falls
    /// in (spring forward).
    fn place(&self, wall: NaiveDateTime) -> DateTime<Utc> {
        match self.zone.from_local_datetime(&wall) {
            LocalResult::Single(at) | LocalResult::Ambiguous(at, _) => at.with_timezone(&Utc),
            LocalResult::None => self.gap_end(wall),
        }
    }

    /// The first instant whose local time is at or after `wall` (the end of
    /// the gap `wall` falls in): a binary search over the 72 hours around it,
    /// where local time only moves forward across a gap.
    fn gap_end(&self, wall: NaiveDateTime) -> DateTime<Utc> {
        // Zone changes fall on whole seconds: search Unix seconds.
        let centre = wall.and_utc().timestamp();
        let (mut low, mut high) = (centre - 36 * 3600, centre + 36 * 3600);
        let local = |second: i64| {
            DateTime::from_timestamp(second, 0).map(|t| t.with_timezone(&self.zone).naive_local())
        };
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if local(middle).is_some_and(|l| l >= wall) {
                high = middle;
            } else {
                low = middle;
            }
        }
        DateTime::from_timestamp(high, 0).unwrap_or(DateTime::UNIX_EPOCH)
    }
}

/// The jitter of a slot: an offset in `[0, jitter_seconds)` from a hash of
/// the schedule id and the slot, so every replica computes the same one.
pub(crate) fn jitter(schedule_id: Uuid, slot: DateTime<Utc>, jitter_seconds: i64) -> Duration {
    if jitter_seconds <= 0 {
        return Duration::zero();
    }
    let mut hash = Sha256::new();
    hash.update(schedule_id.as_bytes());
    hash.update(slot.timestamp_millis().to_be_bytes());
    let digest = hash.finalize();
    let mut word = [0u8; 8];
    word.copy_from_slice(&digest[..8]);
    let range = jitter_seconds as u64 * 1000;
    Duration::milliseconds((u64::from_be_bytes(word) % range) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paris(cron: &str) -> Spec {
        Spec::new(Some(cron), None, "Europe/Paris", None).unwrap()
    }

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn a_missing_local_time_fires_once_after_the_gap() {
        // 2026-03-29: Paris moves from 02:00 CET to 03:00 CEST (01:00 UTC).
        let spec = paris("30 2 * * *");
        let slots = spec
            .slots_between(at("2026-03-28T12:00:00Z"), at("2026-03-30T12:00:00Z"), 10)
            .unwrap();
        assert_eq!(
            slots,
            vec![at("2026-03-29T01:00:00Z"), at("2026-03-30T00:30:00Z")]
        );
    }

    #[test]
    fn a_repeated_local_time_fires_at_its_first_occurrence() {
        // 2026-10-25: Paris goes back from 03:00 CEST to 02:00 CET (01:00 UTC).
        let spec = paris("30 2 * * *");
        let slots = spec
            .slots_between(at("2026-10-24T12:00:00Z"), at("2026-10-26T12:00:00Z"), 10)
            .unwrap();
        assert_eq!(
            slots,
            vec![at("2026-10-25T00:30:00Z"), at("2026-10-26T01:30:00Z")]
        );
        let hourly = paris("0 * * * *");
        let slots = hourly
            .slots_between(at("2026-10-24T23:30:00Z"), at("2026-10-25T03:30:00Z"), 10)
            .unwrap();
        // 02:00 CEST, then 03:00 CET: the second 02:00 (CET) is not a slot.
        assert_eq!(
            slots,
            vec![
                at("2026-10-25T00:00:00Z"),
                at("2026-10-25T02:00:00Z"),
                at("2026-10-25T03:00:00Z")
            ]
        );
    }

    #[test]
    fn intervals_and_jitter_are_deterministic() {
        let spec = Spec::new(None, Some(60), "UTC", None).unwrap();
        assert_eq!(
            spec.next_after(at("2026-01-01T00:00:30Z")),
            Some(at("2026-01-01T00:01:00Z"))
        );
        assert_eq!(
            spec.at_or_after(at("2026-01-01T00:01:00Z")),
            Some(at("2026-01-01T00:01:00Z"))
        );
        let id = Uuid::now_v7();
        let slot = at("2026-01-01T00:01:00Z");
        assert_eq!(jitter(id, slot, 30), jitter(id, slot, 30));
        assert!(jitter(id, slot, 30) < Duration::seconds(30));
        assert_eq!(jitter(id, slot, 0), Duration::zero());
    }
}
