//! SQLite's bulk claim of a worker's batch ([`crate::lifecycle::claim_batch`]'s
//! `bulk_sqlite`): the probes that say whether the batch's free agents
//! would all take the next task of the same claim-order walk, the walk, and
//! the one `UPDATE` that claims its tasks.

use crate::tasks::rows::task_columns;

/// SQLite's bulk claim of a batch (the same cases as the PostgreSQL function's bulk claim ([`super::function`]),
/// checked by [`crate::lifecycle::claim_batch`]): whether the tenant (`$1`) has a
/// pending task with a concurrency key.
pub(in crate::lifecycle) const KEYED_PENDING_SQLITE: &str = "SELECT EXISTS (SELECT 1 FROM tasks l \
     INDEXED BY tasks_keyed_claimable WHERE l.tenant_id = $1 AND l.state = 'pending' \
     AND l.concurrency_key IS NOT NULL)";

/// SQLite's bulk claim: which of the agents (`$1`, a JSON array of hex ids)
/// hold a task.
pub(in crate::lifecycle) const HOLDERS_SQLITE: &str = "SELECT h.assigned_agent_id FROM tasks h \
     INDEXED BY tasks_held_by_agent WHERE h.assigned_agent_id IN \
     (SELECT unhex(value) FROM json_each($1)) AND h.state IN ('claimed', 'in_progress')";

/// SQLite's bulk claim: whether a pending task prefers one of the agents
/// (`$1`, a JSON array of hex ids) or the worker (`$2`), each an index
/// probe of its preferred index.
pub(in crate::lifecycle) const PREFERRED_PENDING_SQLITE: &str = "SELECT EXISTS (SELECT 1 FROM tasks t \
     INDEXED BY tasks_claimable_preferred_agent WHERE t.state = 'pending' \
     AND t.preferred_agent_id IS NOT NULL \
     AND t.preferred_agent_id IN (SELECT unhex(value) FROM json_each($1))) \
     OR EXISTS (SELECT 1 FROM tasks t INDEXED BY tasks_claimable_preferred_worker \
     WHERE t.state = 'pending' AND t.preferred_worker_id IS NOT NULL \
     AND t.preferred_worker_id = $2)";

/// SQLite's bulk claim: the first `$9` tasks of the claim-order walk that
/// prefer no assignee, with whether each is free of flow-limit keys (the
/// walk is taken up to the first that is not), over the one-request
/// claim's eight parameters.
///
/// The limit is `CAST($9 AS INTEGER)`, not `$9`: SQLite's planner reads a
/// bare parameter's value in `LIMIT`, and a statement whose plan read a
/// parameter is compiled again whenever that parameter is bound again,
/// here at every batch (bench/HISTORY.md item 37).
pub(in crate::lifecycle) const BULK_CANDIDATES_SQLITE: &str = concat!(
    "SELECT t.id, t.concurrency_key IS NULL AND t.rate_limit_key IS NULL FROM tasks t WHERE ",
    eligible!(sqlite, "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8"),
    " AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL \
     ORDER BY t.priority_rank DESC, t.created_at, t.id LIMIT CAST($9 AS INTEGER)"
);

/// SQLite's bulk claim: claims the tasks of `$1` (a JSON array of `[task,
/// agent, worker]` hex ids) at `$2`, each for its agent, as the one-request
/// claim does ([`claim_set!`]).
macro_rules! bulk_update_sqlite {
    ($moves:ident) => {
        concat!(
            "UPDATE tasks SET ",
            claim_set!($moves, "c.agent", "c.worker", "$2"),
            " FROM (SELECT unhex(value ->> '$[0]') AS task, unhex(value ->> '$[1]') AS agent, \
               unhex(value ->> '$[2]') AS worker FROM json_each($1)) c \
             WHERE tasks.id = c.task RETURNING ",
            task_columns!()
        )
    };
}

/// [`bulk_update_sqlite!`] for a batch without `start`.
pub(in crate::lifecycle) const BULK_UPDATE_SQLITE: &str = bulk_update_sqlite!(claimed);
/// [`bulk_update_sqlite!`] for a batch with `start: true`.
pub(in crate::lifecycle) const BULK_UPDATE_SQLITE_STARTED: &str = bulk_update_sqlite!(started);
