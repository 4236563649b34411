use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A point in time as the wire carries it: RFC 3339 in UTC with exactly three
/// fractional digits and a `Z` suffix (`2026-11-21T19:00:00.000Z`).
///
/// Values are truncated to whole milliseconds when created, so what a client
/// reads back compares equal to what the store holds and orders the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    /// The current time of the system, truncated to milliseconds: for SDK
    /// and CLI code. The core never calls it; it reads its clock
    /// (`ControlPlane::now`), which `orchestrator-core/clippy.toml` enforces.
    #[allow(clippy::disallowed_methods)]
    pub fn now() -> Self {
        Self::from(Utc::now())
    }

    /// The wrapped chrono value.
    pub fn as_datetime(&self) -> DateTime<Utc> {
        self.0
    }

    /// This time plus a duration (saturating at chrono's range).
    pub fn plus(self, duration: std::time::Duration) -> Self {
        let delta = chrono::Duration::from_std(duration).unwrap_or(chrono::Duration::MAX);
        Self::from(
            self.0
                .checked_add_signed(delta)
                .unwrap_or(DateTime::<Utc>::MAX_UTC),
        )
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(value: DateTime<Utc>) -> Self {
        Self(value.trunc_subsecs(3))
    }
}

impl From<Timestamp> for DateTime<Utc> {
    fn from(value: Timestamp) -> Self {
        value.0
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        DateTime::parse_from_rfc3339(&text)
            .map(|t| Self::from(t.with_timezone(&Utc)))
            .map_err(|_| serde::de::Error::custom("expected an RFC 3339 timestamp"))
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "date-time",
            "description": "RFC 3339 in UTC with three fractional digits: 2026-11-21T19:00:00.000Z"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_three_fractional_digits_and_z() {
        let t: Timestamp = DateTime::parse_from_rfc3339("2026-11-21T19:00:00.123456+02:00")
            .unwrap()
            .with_timezone(&Utc)
            .into();
        assert_eq!(t.to_string(), "2026-11-21T17:00:00.123Z");
        let whole: Timestamp = DateTime::parse_from_rfc3339("2026-11-21T19:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
            .into();
        assert_eq!(whole.to_string(), "2026-11-21T19:00:00.000Z");
    }
}
