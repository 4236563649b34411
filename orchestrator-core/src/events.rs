//! The entity-event log: every state change appends an event in the same
//! transaction as the change, and the event reaches subscribers only after
//! that transaction commits (see [`crate::store::Tx::commit`]).

use crate::api::{Event, Timestamp};
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::store::StoredJson;
use crate::store::{Access, Db, DeferKind, Tx, WithParts, arg_count, on_db, push_arg};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use uuid::Uuid;

/// An event about to be written.
#[derive(Debug, Clone)]
pub(crate) struct NewEvent<'a> {
    pub event_type: &'a str,
    pub entity_type: &'a str,
    pub entity_id: Uuid,
    pub workflow_id: Option<Uuid>,
    pub workspace_id: Option<Uuid>,
    pub data: Value,
}

impl<'a> NewEvent<'a> {
    pub fn new(event_type: &'a str, entity_type: &'a str, entity_id: Uuid, data: Value) -> Self {
        Self {
            event_type,
            entity_type,
            entity_id,
            workflow_id: None,
            workspace_id: None,
            data,
        }
    }
}

#[derive(sqlx::FromRow)]
struct EventRow {
    id: i64,
    #[sqlx(rename = "type")]
    event_type: String,
    entity_type: String,
    entity_id: Uuid,
    workflow_id: Option<Uuid>,
    workspace_id: Option<Uuid>,
    actor_type: Option<String>,
    actor_id: Option<Uuid>,
    data: StoredJson,
    created_at: DateTime<Utc>,
}

impl From<EventRow> for Event {
    fn from(row: EventRow) -> Self {
        Event {
            id: row.id,
            event_type: row.event_type,
            entity_type: row.entity_type,
            entity_id: row.entity_id,
            workflow_id: row.workflow_id,
            workspace_id: row.workspace_id,
            actor_type: row.actor_type,
            actor_id: row.actor_id,
            data: row.data.0,
            created_at: row.created_at.into(),
        }
    }
}

/// The columns an event insert writes, and what it returns.
const INSERT_COLUMNS: &str = "tenant_id, type, entity_type, entity_id, workflow_id, workspace_id, \
     actor_type, actor_id, data, created_at";
const INSERT_COLUMN_COUNT: usize = 10;

/// Most events one statement inserts (SQLite allows 32,766 parameters).
const EVENTS_PER_STATEMENT: usize = 1000;

/// An event ready to insert: the request's event with its tenant, actor and
/// time resolved.
struct PendingEvent {
    tenant_id: Uuid,
    event_type: String,
    entity_type: String,
    entity_id: Uuid,
    workflow_id: Option<Uuid>,
    workspace_id: Option<Uuid>,
    actor_type: String,
    actor_id: Option<Uuid>,
    data: Value,
    created_at: DateTime<Utc>,
}

impl PendingEvent {
    fn new(caller: &Caller, tenant_id: Uuid, event: NewEvent<'_>, now: Timestamp) -> Self {
        Self {
            tenant_id,
            event_type: event.event_type.to_owned(),
            entity_type: event.entity_type.to_owned(),
            entity_id: event.entity_id,
            workflow_id: event.workflow_id,
            workspace_id: event.workspace_id,
            actor_type: caller.owner_type.clone(),
            actor_id: caller.owner_id.or(Some(caller.key_id)),
            data: event.data,
            created_at: now.as_datetime(),
        }
    }
}

impl PendingEvent {
    /// The event this row became, under the id its insert gave it.
    fn into_event(self, id: i64) -> Event {
        Event {
            id,
            event_type: self.event_type,
            entity_type: self.entity_type,
            entity_id: self.entity_id,
            workflow_id: self.workflow_id,
            workspace_id: self.workspace_id,
            actor_type: Some(self.actor_type),
            actor_id: self.actor_id,
            data: self.data,
            created_at: self.created_at.into(),
        }
    }
}

/// The events `rows` became, from the ids their inserts returned.
///
/// An insert returns only the ids: every other column is what the row
/// already holds (the time is in the wire's milliseconds already), and
/// reading the rows back, the `data` JSON parsed again, cost the SQLite
/// writer thread about a tenth of its time in the batched drain. The ids
/// go to the rows in order: one statement numbers its rows in the order it
/// inserts them (SQLite's next rowid, PostgreSQL's sequence taken row by
/// row), which is the order of `rows`.
fn into_events(rows: Vec<PendingEvent>, mut ids: Vec<i64>) -> Result<Vec<Event>> {
    if ids.len() != rows.len() {
        return Err(Error::internal(format!(
            "{} events inserted, {} ids returned",
            rows.len(),
            ids.len()
        )));
    }
    ids.sort_unstable();
    Ok(rows
        .into_iter()
        .zip(ids)
        .map(|(row, id)| row.into_event(id))
        .collect())
}

/// Inserts `rows` in one statement and answers their ids, ascending.
async fn insert(db: &mut (impl Access + ?Sized), rows: &[PendingEvent]) -> Result<Vec<i64>> {
    let sqlite = matches!(Access::db(db), Db::Sqlite(_));
    let mut sql = format!("INSERT INTO events ({INSERT_COLUMNS}) VALUES ");
    let mut n = 0;
    for i in 0..rows.len() {
        if i > 0 {
            sql.push(',');
        }
        sql.push('(');
        for j in 0..INSERT_COLUMN_COUNT {
            if j > 0 {
                sql.push(',');
            }
            // Anonymous placeholders on SQLite: sqlx looks each `$N` up by
            // name, a linear search per parameter.
            if sqlite {
                sql.push('?');
            } else {
                n += 1;
                sql.push_str(&format!("${n}"));
            }
        }
        sql.push(')');
    }
    // The webhook outbox's deliveries come with the events: in the same
    // statement on PostgreSQL, just after it on SQLite
    // ([`crate::webhook_outbox`]).
    let sql = match sqlite {
        true => format!("{sql} RETURNING id"),
        false => crate::webhook_outbox::pg_statement("", &sql),
    };
    let mut ids: Vec<i64> = on_db!(db, c => {
        let mut query = sqlx::query_scalar(sqlx::AssertSqlSafe(sql));
        for row in rows {
            query = query
                .bind(row.tenant_id)
                .bind(row.event_type.as_str())
                .bind(row.entity_type.as_str())
                .bind(row.entity_id)
                .bind(row.workflow_id)
                .bind(row.workspace_id)
                .bind(row.actor_type.as_str())
                .bind(row.actor_id)
                .bind(Json(&row.data))
                .bind(row.created_at);
        }
        query.fetch_all(c).await
    })?;
    ids.sort_unstable();
    if let (true, Some(&first), Some(&last)) = (sqlite, ids.first(), ids.last()) {
        crate::webhook_outbox::sqlite_deliveries(db, first, last).await?;
    }
    Ok(ids)
}

/// Inserts `rows` after the `WITH` parts of other deferred kinds, all in one
/// statement (PostgreSQL only: [`crate::store::DeferKind`]), and answers
/// their ids, ascending. The events' columns go as one array each, so the
/// statement's text depends only on the parts; the rows are inserted in
/// the arrays' order (`WITH ORDINALITY`), which [`into_events`] relies on.
async fn insert_with(
    db: &mut (impl Access + ?Sized),
    rows: &[PendingEvent],
    parts: WithParts,
) -> Result<Vec<i64>> {
    let WithParts {
        statements,
        mut args,
    } = parts;
    fn column<'r, T>(rows: &'r [PendingEvent], f: impl Fn(&'r PendingEvent) -> T) -> Vec<T> {
        rows.iter().map(f).collect()
    }
    let first = arg_count(&args) + 1;
    let added = [
        push_arg(&mut args, column(rows, |r| r.tenant_id)),
        push_arg(&mut args, column(rows, |r| r.event_type.as_str())),
        push_arg(&mut args, column(rows, |r| r.entity_type.as_str())),
        push_arg(&mut args, column(rows, |r| r.entity_id)),
        push_arg(&mut args, column(rows, |r| r.workflow_id)),
        push_arg(&mut args, column(rows, |r| r.workspace_id)),
        push_arg(&mut args, column(rows, |r| r.actor_type.as_str())),
        push_arg(&mut args, column(rows, |r| r.actor_id)),
        push_arg(&mut args, column(rows, |r| Json(&r.data))),
        push_arg(&mut args, column(rows, |r| r.created_at)),
    ];
    for added in added {
        added.map_err(Error::internal)?;
    }
    let types = [
        "uuid",
        "text",
        "text",
        "uuid",
        "uuid",
        "uuid",
        "text",
        "uuid",
        "jsonb",
        "timestamptz",
    ];
    let arrays: Vec<String> = (types.iter().enumerate())
        .map(|(i, ty)| format!("${}::{ty}[]", first + i))
        .collect();
    let with: Vec<String> = (statements.iter().enumerate())
        .map(|(i, statement)| format!("w{i} AS ({statement})"))
        .collect();
    let insert = format!(
        "INSERT INTO events ({INSERT_COLUMNS}) SELECT {INSERT_COLUMNS} FROM unnest({}) \
         WITH ORDINALITY AS u({INSERT_COLUMNS}, n) ORDER BY n",
        arrays.join(", ")
    );
    // With the webhook outbox's deliveries ([`crate::webhook_outbox`]).
    let sql = crate::webhook_outbox::pg_statement(&with.join(", "), &insert);
    let mut ids: Vec<i64> = on_db!(db, c =>
        sqlite: {
            let _ = c;
            Err(sqlx::Error::Configuration("only PostgreSQL batches run WITH parts".into()))
        },
        postgres: sqlx::query_scalar_with(sqlx::AssertSqlSafe(sql), args).fetch_all(c).await,
    )?;
    ids.sort_unstable();
    Ok(ids)
}

/// Writes the events the requests of one write batch deferred
/// (`store::deferred::FlushFn`), with the other kinds' rows when the batch
/// hands it their `WITH` parts.
fn flush(
    db: &mut dyn Access,
    rows: Vec<Box<dyn Any + Send>>,
    parts: Option<WithParts>,
) -> Pin<Box<dyn Future<Output = Result<Vec<Event>>> + Send + '_>> {
    let rows: Vec<PendingEvent> = rows
        .into_iter()
        .filter_map(|row| row.downcast::<PendingEvent>().ok().map(|row| *row))
        .collect();
    Box::pin(async move {
        let ids = match parts {
            Some(parts) => insert_with(db, &rows, parts).await?,
            None => {
                let mut ids = Vec::with_capacity(rows.len());
                for chunk in rows.chunks(EVENTS_PER_STATEMENT) {
                    ids.extend(insert(db, chunk).await?);
                }
                ids
            }
        };
        into_events(rows, ids)
    })
}

/// Events, deferred to their batch's commit; on PostgreSQL their statement
/// also carries the batch's other deferred rows ([`DeferKind`]).
static EVENTS: DeferKind = DeferKind {
    name: "event",
    flush,
    with_part: None,
    hosts: true,
};

/// Appends an event to `tx`, acted by `caller` in the caller's tenant. The
/// row is written with the other events of `tx`'s write batch, in one
/// statement just before the batch commits, and published after the commit
/// ([`Tx::defer`]): nothing reads an event back in the transaction that
/// records it.
pub(crate) async fn record(
    tx: &mut Tx,
    caller: &Caller,
    tenant_id: Uuid,
    event: NewEvent<'_>,
) -> Result<()> {
    let row = PendingEvent::new(caller, tenant_id, event, tx.now());
    tx.defer(&EVENTS, row);
    Ok(())
}

/// [`record`], written at once, for a caller that answers with the event
/// (its id).
pub(crate) async fn record_now(
    tx: &mut Tx,
    caller: &Caller,
    tenant_id: Uuid,
    event: NewEvent<'_>,
) -> Result<Event> {
    let row = PendingEvent::new(caller, tenant_id, event, tx.now());
    let ids = insert(tx, std::slice::from_ref(&row)).await?;
    let event = into_events(vec![row], ids)?
        .pop()
        .ok_or_else(|| Error::internal("an event insert returned no row"))?;
    tx.publish_after_commit(event.clone());
    Ok(event)
}

/// Events about a workspace (`workspace_id` set), newest first, and how
/// many there are.
pub(crate) async fn list_for_workspace(
    access: &mut impl crate::store::Access,
    tenant_id: Uuid,
    workspace_id: Uuid,
    limit: i64,
    offset: i64,
) -> Result<(Vec<Event>, i64)> {
    let (total,): (i64,) = on_db!(access, c => sqlx::query_as(
        "SELECT COUNT(*) FROM events WHERE tenant_id = $1 AND workspace_id = $2",
    )
    .bind(tenant_id)
    .bind(workspace_id)
    .fetch_one(c)
    .await)?;
    let rows: Vec<EventRow> = on_db!(access, c => sqlx::query_as(
        "SELECT id, type, entity_type, entity_id, workflow_id, workspace_id, actor_type, actor_id, data, created_at \
         FROM events WHERE tenant_id = $1 AND workspace_id = $2 ORDER BY id DESC LIMIT $3 OFFSET $4",
    )
    .bind(tenant_id)
    .bind(workspace_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(c)
    .await)?;
    Ok((rows.into_iter().map(Event::from).collect(), total))
}

/// Largest `limit` of `GET /events`.
pub const MAX_EVENT_LIMIT: u32 = 500;
/// `limit` of `GET /events` when none is given.
pub const DEFAULT_EVENT_LIMIT: u32 = 50;

/// A position in the events' read order: `(txid, id)`, `txid` 0 on SQLite.
///
/// Events are read in the same order as log rows (see [`crate::logs`]): by
/// id on SQLite, by `(txid, id)` below the safe high-water mark on
/// PostgreSQL, where ids commit out of order. Clients still resume with the
/// plain event id (`after`, `Last-Event-ID`); the server looks up its txid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct EventKey {
    /// The PostgreSQL transaction id that wrote the event; 0 on SQLite,
    /// where ids commit in order.
    pub txid: i64,
    /// The event's id (what clients resume from).
    pub id: i64,
}

#[derive(sqlx::FromRow)]
struct KeyedEventRow {
    txid: i64,
    #[sqlx(flatten)]
    row: EventRow,
}

impl crate::control_plane::ControlPlane {
    /// `GET /events`: the tenant's events after `after`, oldest first.
    pub async fn list_events(
        &self,
        caller: &Caller,
        filter: crate::api::EventFilter,
    ) -> Result<crate::api::EventPage> {
        let limit = match filter.limit {
            None => DEFAULT_EVENT_LIMIT,
            Some(n) if (1..=MAX_EVENT_LIMIT).contains(&n) => n,
            Some(_) => {
                return Err(crate::error::Error::invalid_field(
                    "limit",
                    format!("must be 1 to {MAX_EVENT_LIMIT}"),
                ));
            }
        };
        let from = EventKey {
            txid: 0,
            id: filter.after.unwrap_or(0).max(0),
        };
        let mut items = self
            .read_events(caller, &filter, from, limit + 1, false)
            .await?;
        let has_more = items.len() > limit as usize;
        items.truncate(limit as usize);
        Ok(crate::api::EventPage {
            next_after: Some(items.last().map_or(from.id, |(_, e)| e.id).to_string()),
            has_more,
            items: items.into_iter().map(|(_, e)| e).collect(),
        })
    }

    /// The key to read after, for a client position `after` (an event id;
    /// 0 = from the beginning).
    pub async fn event_start(&self, caller: &Caller, after: i64) -> Result<EventKey> {
        if after <= 0 || self.store().dialect() == crate::store::Dialect::Sqlite {
            return Ok(EventKey {
                txid: 0,
                id: after.max(0),
            });
        }
        let mut conn = self.store().read().await?;
        let found: Option<(i64,)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT txid FROM events WHERE tenant_id = $1 AND id <= $2 ORDER BY id DESC LIMIT 1"
        )
        .bind(caller.tenant_id)
        .bind(after)
        .fetch_optional(c)
        .await)?;
        Ok(EventKey {
            txid: found.map_or(0, |(t,)| t),
            id: after,
        })
    }

    /// The newest committed event key (where a live stream without a resume
    /// point starts).
    pub async fn event_head(&self, caller: &Caller) -> Result<EventKey> {
        let mut conn = self.store().read().await?;
        let found: Option<(i64, i64)> = on_db!(&mut conn, c => sqlite: sqlx::query_as(
            "SELECT 0, id FROM events WHERE tenant_id = $1 ORDER BY id DESC LIMIT 1"
        )
        .bind(caller.tenant_id)
        .fetch_optional(c)
        .await,
        postgres: sqlx::query_as(
            "SELECT txid, id FROM events WHERE tenant_id = $1 \
             ORDER BY txid DESC, id DESC LIMIT 1"
        )
        .bind(caller.tenant_id)
        .fetch_optional(c)
        .await)?;
        Ok(
            found.map_or(EventKey { txid: 0, id: 0 }, |(txid, id)| EventKey {
                txid,
                id,
            }),
        )
    }

    /// Up to `limit` events after `from` matching `filter` (its `after` and
    /// `limit` are ignored), in the streams' read order (see [`EventKey`]).
    pub async fn read_events_forward(
        &self,
        caller: &Caller,
        filter: &crate::api::EventFilter,
        from: EventKey,
        limit: u32,
    ) -> Result<Vec<(EventKey, Event)>> {
        self.read_events(caller, filter, from, limit, true).await
    }

    /// `safe`: the streams' order and high-water mark; otherwise plain id
    /// order over every committed event (`GET /events`, which answers what
    /// is committed now; followers that must never miss an event use the
    /// stream).
    async fn read_events(
        &self,
        caller: &Caller,
        filter: &crate::api::EventFilter,
        from: EventKey,
        limit: u32,
        safe: bool,
    ) -> Result<Vec<(EventKey, Event)>> {
        let keyed = safe && self.store().dialect() == crate::store::Dialect::Postgres;
        let dialect = if keyed {
            crate::store::Dialect::Postgres
        } else {
            crate::store::Dialect::Sqlite
        };
        let mut sql = String::from(match self.store().dialect() {
            crate::store::Dialect::Postgres if !keyed => {
                "SELECT txid, id, type, entity_type, entity_id, workflow_id, workspace_id, actor_type, actor_id, data, created_at FROM events WHERE tenant_id = $1"
            }
            crate::store::Dialect::Sqlite => {
                "SELECT 0 AS txid, id, type, entity_type, entity_id, workflow_id, workspace_id, actor_type, actor_id, data, created_at FROM events WHERE tenant_id = $1"
            }
            crate::store::Dialect::Postgres => {
                "SELECT txid, id, type, entity_type, entity_id, workflow_id, workspace_id, actor_type, actor_id, data, created_at FROM events WHERE tenant_id = $1 \
                 AND txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
            }
        });
        let mut n = 1;
        let mut next = || {
            n += 1;
            format!("${n}")
        };
        let texts: Vec<(&str, &String)> = [
            ("type", filter.event_type.as_ref()),
            ("entity_type", filter.entity_type.as_ref()),
        ]
        .into_iter()
        .filter_map(|(c, v)| v.map(|v| (c, v)))
        .collect();
        for (column, _) in &texts {
            sql.push_str(&format!(" AND {column} = {}", next()));
        }
        let uuids: Vec<(&str, Uuid)> = [
            ("entity_id", filter.entity_id),
            ("workflow_id", filter.workflow_id),
            ("workspace_id", filter.workspace_id),
        ]
        .into_iter()
        .filter_map(|(c, v)| v.map(|v| (c, v)))
        .collect();
        for (column, _) in &uuids {
            sql.push_str(&format!(" AND {column} = {}", next()));
        }
        match dialect {
            crate::store::Dialect::Sqlite => {
                let (_, i) = (next(), next());
                sql.push_str(&format!(" AND id > {i} ORDER BY id"));
            }
            crate::store::Dialect::Postgres => {
                let (t, i) = (next(), next());
                sql.push_str(&format!(" AND (txid, id) > ({t}, {i}) ORDER BY txid, id"));
            }
        }
        sql.push_str(&format!(" LIMIT {}", next()));
        let mut conn = self.store().read().await?;
        let rows: Vec<KeyedEventRow> = on_db!(&mut conn, c => {
            let mut query = sqlx::query_as::<_, KeyedEventRow>(sqlx::AssertSqlSafe(sql.clone()))
                .bind(caller.tenant_id);
            for (_, v) in &texts {
                query = query.bind(v.as_str());
            }
            for (_, v) in &uuids {
                query = query.bind(*v);
            }
            query
                .bind(from.txid)
                .bind(from.id)
                .bind(i64::from(limit))
                .fetch_all(c)
                .await
        })?;
        drop(conn);
        Ok(rows
            .into_iter()
            .map(|r| {
                (
                    EventKey {
                        txid: r.txid,
                        id: r.row.id,
                    },
                    Event::from(r.row),
                )
            })
            .collect())
    }
}
