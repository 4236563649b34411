//! The fixed set of a bulk action: its `ids` (each one of the tenant's), or
//! what its `filter` matches when it is created, oldest first.

use crate::api::{BulkFilter, BulkTarget, MAX_BULK_IDS, TaskState, WorkflowState};
use crate::error::{Error, Result};
use crate::store::{Access, contains_pattern, on_db};
use uuid::Uuid;

/// Most entities a filter may match (narrow it, or act in several steps).
pub(crate) const MAX_MATCHED: usize = 100_000;

fn table(target: BulkTarget) -> &'static str {
    match target {
        BulkTarget::Tasks => "tasks",
        BulkTarget::Workflows => "workflows",
    }
}

/// `ids`, without repeats and in the order given; 404 when one is not an
/// entity of the tenant.
pub(crate) async fn by_ids(
    access: &mut (impl Access + ?Sized),
    tenant_id: Uuid,
    target: BulkTarget,
    ids: &[Uuid],
) -> Result<Vec<Uuid>> {
    if ids.is_empty() || ids.len() > MAX_BULK_IDS {
        return Err(Error::invalid_field(
            "ids",
            format!("must list 1 to {MAX_BULK_IDS} ids"),
        ));
    }
    let mut unique = Vec::with_capacity(ids.len());
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        if seen.insert(*id) {
            unique.push(*id);
        }
    }
    let mut found = std::collections::HashSet::new();
    for chunk in unique.chunks(500) {
        let marks: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!(
            "SELECT id FROM {} WHERE tenant_id = $1 AND id IN ({})",
            table(target),
            marks.join(", ")
        );
        let rows: Vec<(Uuid,)> = on_db!(access, c => {
            let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql.clone())).bind(tenant_id);
            for id in chunk {
                query = query.bind(*id);
            }
            query.fetch_all(c).await
        })?;
        found.extend(rows.into_iter().map(|(id,)| id));
    }
    if unique.iter().any(|id| !found.contains(id)) {
        return Err(Error::not_found(match target {
            BulkTarget::Tasks => "task",
            BulkTarget::Workflows => "workflow",
        }));
    }
    Ok(unique)
}

/// What `filter` matches now, oldest first (at most [`MAX_MATCHED`]).
pub(crate) async fn by_filter(
    access: &mut (impl Access + ?Sized),
    tenant_id: Uuid,
    target: BulkTarget,
    filter: &BulkFilter,
) -> Result<Vec<Uuid>> {
    if filter.is_empty() {
        return Err(Error::invalid_field(
            "filter",
            "must set at least one field (an empty filter would match everything)",
        ));
    }
    let state = match (&filter.state, target) {
        (None, _) => None,
        (Some(s), BulkTarget::Tasks) => Some(
            TaskState::parse(s)
                .ok_or_else(|| {
                    Error::invalid_field("filter.state", format!("`{s}` is not a task state"))
                })?
                .as_str()
                .to_owned(),
        ),
        (Some(s), BulkTarget::Workflows) => {
            serde_json::from_value::<WorkflowState>(serde_json::Value::String(s.clone())).map_err(
                |_| Error::invalid_field("filter.state", format!("`{s}` is not a workflow state")),
            )?;
            Some(s.clone())
        }
    };
    let search =
        contains_pattern("filter.search", filter.search.as_deref())?.map(|p| p.to_lowercase());
    let (id_column, type_column, text_column) = match target {
        BulkTarget::Tasks => ("workflow_id", "type", "title"),
        BulkTarget::Workflows => ("id", "lifecycle", "name"),
    };
    let workspace = filter.workspace_id;
    let sql = format!(
        "SELECT id FROM {} WHERE tenant_id = $1 AND ($2 IS NULL OR state = $2) \
         AND ($3 IS NULL OR {id_column} = $3) AND ($4 IS NULL OR workspace_id = $4) \
         AND ($5 IS NULL OR {type_column} = $5) \
         AND ($6 IS NULL OR LOWER({text_column}) LIKE $6 ESCAPE '\\') \
         AND ($7 IS NULL OR created_at >= $7) AND ($8 IS NULL OR created_at < $8) \
         ORDER BY created_at, id LIMIT $9",
        table(target)
    );
    let rows: Vec<(Uuid,)> = on_db!(access, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
        .bind(tenant_id)
        .bind(&state)
        .bind(filter.workflow_id)
        .bind(workspace)
        .bind(&filter.entity_type)
        .bind(&search)
        .bind(filter.created_after.map(|t| t.as_datetime()))
        .bind(filter.created_before.map(|t| t.as_datetime()))
        .bind((MAX_MATCHED + 1) as i64)
        .fetch_all(c)
        .await)?;
    if rows.len() > MAX_MATCHED {
        return Err(Error::invalid_field(
            "filter",
            format!("matches more than {MAX_MATCHED} entities; narrow it"),
        ));
    }
    Ok(rows.into_iter().map(|(id,)| id).collect())
}
