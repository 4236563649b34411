//! Queries over the log: pages (newest first), one row, and the forward
//! reads that streams follow.

use crate::api::logs::MAX_LOG_PAGE;
use crate::api::{LogDetail, LogFilter, LogPage, LogRow};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::store::on_db;

use super::cursor::{Direction, LogKey, StreamStart, head_key, key_of_row};
use super::filter::ResolvedFilter;
use super::rows::{Row, read_rows, select_list};

impl ControlPlane {
    /// `GET /logs`: newest first, keyset pages of up to 500 rows.
    pub async fn query_logs(
        &self,
        caller: &Caller,
        filter: LogFilter,
        detail: LogDetail,
        cursor: Option<&str>,
        per_page: u32,
    ) -> Result<LogPage> {
        let filter = ResolvedFilter::new(filter, self.now())?;
        let from = cursor.map(LogKey::decode).transpose()?;
        let per_page = per_page.clamp(1, MAX_LOG_PAGE);
        let mut conn = self.store().read().await?;
        let mut rows = read_rows(
            &mut conn,
            self.store().dialect(),
            caller.tenant_id,
            &filter,
            from,
            Direction::Backward,
            i64::from(per_page) + 1,
        )
        .await?;
        let more = rows.len() > per_page as usize;
        rows.truncate(per_page as usize);
        let next_cursor = more
            .then(|| rows.last().map(|r| r.key().encode()))
            .flatten();
        let items = rows
            .into_iter()
            .map(|r| r.into_api(detail))
            .collect::<Result<Vec<_>>>()?;
        Ok(LogPage { items, next_cursor })
    }

    /// `GET /logs/:id` (the integer id as text); `None` when there is no
    /// such row in the caller's tenant.
    pub async fn get_log(&self, caller: &Caller, id: &str) -> Result<Option<LogRow>> {
        let Ok(id) = id.trim().parse::<i64>() else {
            return Ok(None);
        };
        let mut conn = self.store().read().await?;
        let sql = format!(
            "{} WHERE tenant_id = $1 AND id = $2",
            select_list(self.store().dialect())
        );
        let row: Option<Row> = on_db!(&mut conn, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
            .bind(caller.tenant_id)
            .bind(id)
            .fetch_optional(c)
            .await)?;
        row.map(|r| r.into_api(LogDetail::Full)).transpose()
    }

    /// Resolves where a stream starts into a key.
    pub async fn log_stream_start(
        &self,
        caller: &Caller,
        filter: &ResolvedFilter,
        start: StreamStart,
    ) -> Result<LogKey> {
        let dialect = self.store().dialect();
        let mut conn = self.store().read().await?;
        match start {
            StreamStart::Cursor(key) => Ok(key),
            StreamStart::AfterRow(id) => key_of_row(&mut conn, dialect, caller.tenant_id, id).await,
            StreamStart::Beginning if filter.since.is_some() => Ok(LogKey { txid: 0, id: 0 }),
            StreamStart::Beginning | StreamStart::Now => {
                head_key(&mut conn, caller.tenant_id).await
            }
        }
    }

    /// Forward read for streams and ascending exports: up to `limit` rows
    /// after `from`, with the key of each. Holds a connection only while the
    /// query runs.
    pub async fn read_logs_forward(
        &self,
        caller: &Caller,
        filter: &ResolvedFilter,
        from: LogKey,
        limit: u32,
        detail: LogDetail,
    ) -> Result<Vec<(LogKey, LogRow)>> {
        let mut conn = self.store().read().await?;
        let rows = read_rows(
            &mut conn,
            self.store().dialect(),
            caller.tenant_id,
            filter,
            Some(from),
            Direction::Forward,
            i64::from(limit),
        )
        .await?;
        drop(conn);
        rows.into_iter()
            .map(|r| {
                let key = r.key();
                r.into_api(detail).map(|row| (key, row))
            })
            .collect()
    }

    /// Read for exports: every committed row after `from` (`None` = from
    /// the start) in `direction` (`ForwardCommitted` or `Backward`).
    pub async fn read_logs_page(
        &self,
        caller: &Caller,
        filter: &ResolvedFilter,
        from: Option<LogKey>,
        direction: Direction,
        limit: u32,
    ) -> Result<Vec<(LogKey, LogRow)>> {
        let mut conn = self.store().read().await?;
        let rows = read_rows(
            &mut conn,
            self.store().dialect(),
            caller.tenant_id,
            filter,
            from,
            direction,
            i64::from(limit),
        )
        .await?;
        drop(conn);
        rows.into_iter()
            .map(|r| {
                let key = r.key();
                r.into_api(LogDetail::Full).map(|row| (key, row))
            })
            .collect()
    }
}
