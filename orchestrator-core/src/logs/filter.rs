//! `GET /logs` filters: validated once ([`ResolvedFilter`]) and turned into
//! SQL conditions with their binds for either dialect.

use crate::api::logs::parse_time_bound;
use crate::api::{LogFilter, Timestamp};
use crate::error::{Error, Result};
use crate::store::{Dialect, contains_pattern};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// A validated filter: the wire filter with its time bounds resolved.
#[derive(Debug, Clone, Default)]
pub struct ResolvedFilter {
    pub(crate) filter: LogFilter,
    pub(crate) since: Option<DateTime<Utc>>,
    pub(crate) until: Option<DateTime<Utc>>,
    /// The `LIKE` pattern of `search` (escaped, length checked).
    pub(crate) search: Option<String>,
}

impl ResolvedFilter {
    /// Checks the filter; bad `since`/`until` or an overlong `search` is
    /// `400 VALIDATION_ERROR`. Relative bounds (`10m`) count back from
    /// `now`, the control plane's clock ([`ControlPlane::now`]).
    ///
    /// [`ControlPlane::now`]: crate::control_plane::ControlPlane::now
    pub fn new(filter: LogFilter, now: Timestamp) -> Result<Self> {
        let bound = |field: &str, text: &Option<String>| -> Result<Option<DateTime<Utc>>> {
            text.as_deref()
                .map(|t| {
                    parse_time_bound(t, now).map(|t| t.as_datetime()).ok_or_else(|| {
                        Error::invalid_field(
                            field,
                            "must be an RFC 3339 timestamp or a duration such as 30s, 10m, 2h, 1d",
                        )
                    })
                })
                .transpose()
        };
        let since = bound("since", &filter.since)?;
        let until = bound("until", &filter.until)?;
        let search = contains_pattern("search", filter.search.as_deref())?;
        Ok(Self {
            filter,
            since,
            until,
            search,
        })
    }

    /// The filter's lower time bound (streams start there when given).
    pub fn since(&self) -> Option<DateTime<Utc>> {
        self.since
    }
}

/// A value bound into dynamic SQL.
#[derive(Debug, Clone)]
pub(crate) enum Bind {
    Uuid(Uuid),
    Text(String),
    Int(i64),
    Time(DateTime<Utc>),
}

/// Dynamic SQL with `$n` parameters.
#[derive(Debug, Default)]
pub(crate) struct Sql {
    pub text: String,
    pub binds: Vec<Bind>,
}

impl Sql {
    pub(crate) fn param(&mut self, bind: Bind) -> String {
        self.binds.push(bind);
        format!("${}", self.binds.len())
    }

    pub(crate) fn push(&mut self, text: &str) {
        self.text.push_str(text);
    }
}

/// Binds `sql.binds` onto a query of either backend.
macro_rules! bind_all {
    ($query:expr, $binds:expr) => {{
        let mut query = $query;
        for bind in $binds {
            query = match bind {
                $crate::logs::filter::Bind::Uuid(v) => query.bind(*v),
                $crate::logs::filter::Bind::Text(v) => query.bind(v.as_str()),
                $crate::logs::filter::Bind::Int(v) => query.bind(*v),
                $crate::logs::filter::Bind::Time(v) => query.bind(*v),
            };
        }
        query
    }};
}

/// Appends ` AND ...` for every filter (the tenant condition comes first).
pub(crate) fn push_filter(
    sql: &mut Sql,
    dialect: Dialect,
    tenant_id: Uuid,
    filter: &ResolvedFilter,
) {
    let p = sql.param(Bind::Uuid(tenant_id));
    sql.push(&format!(" WHERE tenant_id = {p}"));
    let f = &filter.filter;
    let uuids = [
        ("workspace_id", f.workspace_id),
        ("workflow_id", f.workflow_id),
        ("task_id", f.task_id),
        ("work_item_id", f.work_item_id),
        ("activation_id", f.activation_id),
        ("trace_id", f.trace_id),
    ];
    for (column, value) in uuids {
        if let Some(value) = value {
            let p = sql.param(Bind::Uuid(value));
            sql.push(&format!(" AND {column} = {p}"));
        }
    }
    let texts = [
        ("stage_name", f.stage_name.clone()),
        ("source", f.source.map(|v| v.as_str().to_owned())),
        ("category", f.category.map(|v| v.as_str().to_owned())),
        ("level", f.level.map(|v| v.as_str().to_owned())),
        ("operation", f.operation.clone()),
        ("status", f.status.map(|v| v.as_str().to_owned())),
        ("role", f.role.clone()),
    ];
    for (column, value) in texts {
        if let Some(value) = value {
            let p = sql.param(Bind::Text(value));
            sql.push(&format!(" AND {column} = {p}"));
        }
    }
    if let Some(since) = filter.since {
        let p = sql.param(Bind::Time(since));
        sql.push(&format!(" AND created_at >= {p}"));
    }
    if let Some(until) = filter.until {
        let p = sql.param(Bind::Time(until));
        sql.push(&format!(" AND created_at < {p}"));
    }
    if let Some(pattern) = filter.search.as_deref() {
        let p = sql.param(Bind::Text(pattern.to_owned()));
        match dialect {
            Dialect::Sqlite => sql.push(&format!(
                " AND (operation LIKE {p} ESCAPE '\\' OR payload LIKE {p} ESCAPE '\\')"
            )),
            Dialect::Postgres => sql.push(&format!(
                " AND (operation ILIKE {p} ESCAPE '\\' OR payload::text ILIKE {p} ESCAPE '\\')"
            )),
        }
    }
}

pub(crate) use bind_all;
