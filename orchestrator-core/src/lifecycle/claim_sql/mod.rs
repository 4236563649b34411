//! The text of the claim statements, all built from the macros here so the
//! eligibility rules have one source (the rules: [`super::claim`]). What
//! uses them is in three modules, by where the statements run:
//!
//! - [`one_request`]: the one-request claim of each dialect (a claim
//!   request, and every claim where statements are not combined);
//! - [`function`]: the PostgreSQL function that claims for every agent of a
//!   combined claim ([`super::claim_each`]) or a worker's batch
//!   ([`super::claim_batch`]), with its bulk claim;
//! - [`sqlite_bulk`]: SQLite's bulk claim of a worker's batch.

/// The candidate filter shared by the three subqueries (`t` is the task),
/// claimable now (`$now`: pending, and past its `run_at` if it has one),
/// over the claim's parameters as named by the caller: `$n` placeholders for
/// the one-request statements, variables for the PostgreSQL function of
/// combined claims ([`CLAIM_EACH_FUNCTION`]), so both have one source.
macro_rules! eligible {
    (sqlite, $tenant:literal, $agent:literal, $worker:literal, $now:literal, $workflow:literal,
     $tags:literal, $runnable:literal, $env:literal) => {
        concat!(
            "t.state = 'pending' AND t.tenant_id = ", $tenant,
            // Delayed tasks (run control §3): claimable from `run_at` on;
            // `run_at` is the last column of the claimable indexes, so this
            // is answered from the index entry the walk is on.
            " AND (t.run_at IS NULL OR t.run_at <= ", $now, ")",
            " AND (", $workflow, " IS NULL OR t.workflow_id = ", $workflow, ") \
             AND (t.preferred_agent_id IS NULL OR t.preferred_agent_id = ", $agent, ") \
             AND (t.preferred_worker_id IS NULL OR t.preferred_worker_id = ", $worker, ") \
             AND (t.required_tags = '[]' OR NOT EXISTS (SELECT 1 FROM json_each(t.required_tags) r \
                  WHERE r.value NOT IN (SELECT value FROM json_each(", $tags, ")))) \
             AND (t.workflow_id IS NULL OR NOT EXISTS (SELECT 1 FROM workflows w \
                  WHERE w.id = t.workflow_id AND w.state IN ('paused', 'cancelled'))) \
             AND (t.execution_environment_id IS NULL \
                  OR lower(hex(t.execution_environment_id)) IN (SELECT value FROM json_each(", $runnable, "))) \
             AND (", $env, " IS NULL OR t.execution_environment_id = ", $env, ")",
            crate::limits::limits_allow!(sqlite, $now)
        )
    };
    (postgres, $($p:literal),*) => {
        eligible!(@postgres " = ", $($p),*)
    };
    // The candidates among the tasks that prefer the agent or its worker
    // ([`preferred_candidate!`]): the tenant test is one no index answers.
    (postgres_preferred, $($p:literal),*) => {
        eligible!(@postgres " IS NOT DISTINCT FROM ", $($p),*)
    };
    (@postgres $tenant_test:literal, $tenant:literal, $agent:literal, $worker:literal, $now:literal,
     $workflow:literal, $tags:literal, $runnable:literal, $env:literal) => {
        concat!(
            "t.state = 'pending' AND t.tenant_id", $tenant_test, $tenant,
            // Delayed tasks (run control §3), as in the SQLite arm.
            " AND (t.run_at IS NULL OR t.run_at <= ", $now, ")",
            " AND (", $workflow, "::uuid IS NULL OR t.workflow_id = ", $workflow, ") \
             AND (t.preferred_agent_id IS NULL OR t.preferred_agent_id = ", $agent, ") \
             AND (t.preferred_worker_id IS NULL OR t.preferred_worker_id = ", $worker, ") \
             AND t.required_tags <@ ", $tags, "::jsonb \
             AND (t.workflow_id IS NULL OR NOT EXISTS (SELECT 1 FROM workflows w \
                  WHERE w.id = t.workflow_id AND w.state IN ('paused', 'cancelled'))) \
             AND (t.execution_environment_id IS NULL OR t.execution_environment_id = ANY(", $runnable, "::uuid[])) \
             AND (", $env, "::uuid IS NULL OR t.execution_environment_id = ", $env, ")",
            crate::limits::limits_allow!(postgres, $now)
        )
    };
}

/// How a candidate is held until the claim commits: on PostgreSQL locked,
/// and concurrent claimers skip each other's rows instead of waiting; SQLite's
/// one writer already serialises.
macro_rules! candidate_lock {
    (sqlite) => {
        ""
    };
    (postgres) => {
        " FOR UPDATE OF t SKIP LOCKED"
    };
}

/// How a candidate names the row it picked, and how the claim `UPDATE`
/// finds it again: by id on SQLite; by `ctid` on PostgreSQL, a TID scan, the
/// one path the planner has for it. The combined claim runs on a generic
/// plan ([`CLAIM_EACH_FUNCTION`]), planned once per connection, possibly
/// while `tasks` was empty; planned that way, `id = <candidate>` once chose
/// a walk of `tasks_tenant_created` over the primary key (both cost nothing
/// on an empty table), which would have walked every task once the table
/// grew. The row is locked by the candidate's `FOR UPDATE` in the same
/// statement, so its `ctid` cannot move before the update.
macro_rules! row_key {
    (sqlite) => {
        "id"
    };
    (postgres) => {
        "ctid"
    };
}

/// One candidate subquery: the first eligible task, in claim order, that
/// also meets `$prefer` (the pieces of one more condition), held until the
/// claim commits. `$p` are [`eligible!`]'s parameters.
macro_rules! candidate {
    ($dialect:tt, [$($p:literal),*], $($prefer:literal),+) => {
        candidate!(@ $dialect, $dialect, [$($p),*], $($prefer),+)
    };
    // `$filter`: the arm of [`eligible!`] to filter with.
    (@ $filter:tt, $dialect:tt, [$($p:literal),*], $($prefer:literal),+) => {
        concat!(
            "(SELECT t.", row_key!($dialect), " FROM tasks t WHERE ",
            eligible!($filter, $($p),*),
            $($prefer,)+
            " ORDER BY t.priority_rank DESC, t.created_at, t.id LIMIT 1",
            candidate_lock!($dialect),
            ")"
        )
    };
}

/// The candidate among the tasks that prefer this agent (or its worker):
/// [`candidate!`] with `$prefer` the equality on the preferred index's
/// column. On PostgreSQL the claim runs on a generic plan whose choice
/// between that index and `tasks_claimable` (both led by an equality)
/// follows the statistics: analyzed while nothing was pending, as after a
/// quiet hour in a table of a million finished tasks, both looked empty and
/// the plan took `tasks_claimable`, walking every pending task of the
/// tenant twice a claim to find none that prefers the agent (42 ms a claim
/// at 10,000 pending tasks; BENCHMARKS.md, "Flat cost at a million
/// finished tasks"). The tenant test is written so that no index can answer
/// it, which leaves the preferred index the one index condition there is.
/// SQLite has no statistics and keeps its plan.
macro_rules! preferred_candidate {
    (sqlite, [$($p:literal),*], $($prefer:literal),+) => {
        candidate!(sqlite, [$($p),*], $($prefer),+)
    };
    (postgres, [$($p:literal),*], $($prefer:literal),+) => {
        candidate!(@ postgres_preferred, postgres, [$($p),*], $($prefer),+)
    };
}

/// Where the fair pick looks for a group's tasks: for the group without a
/// key, the claimable tasks without one alone (`tasks_claimable_keyless`,
/// migration 0021), so that the probe does not walk the keyed tasks ahead
/// of them in the claim-order index (which made every claim walk every
/// pending keyed task while that group was the one claimed longest ago).
/// PostgreSQL's planner takes that index from its predicate; SQLite's,
/// without statistics, is told.
macro_rules! group_tasks {
    (sqlite, "IS NULL") => {
        "FROM tasks t INDEXED BY tasks_claimable_keyless WHERE "
    };
    ($dialect:tt, $group:literal) => {
        "FROM tasks t WHERE "
    };
}

/// The eligible tasks of the fair pick's group (`$group`: `IS NULL` for
/// the group without a key, else `= <key>`) at the top priority.
macro_rules! in_group {
    ($dialect:tt, [$tenant:literal, $($p:literal),*], $group:tt, $key:literal) => {
        concat!(
            group_tasks!($dialect, $group),
            eligible!($dialect, $tenant, $($p),*),
            " AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL AND t.concurrency_key ",
            $group, $key,
            " AND t.priority_rank = (SELECT t.priority_rank FROM tasks t WHERE ",
            eligible!($dialect, $tenant, $($p),*),
            " AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL \
              ORDER BY t.priority_rank DESC, t.created_at, t.id LIMIT 1)"
        )
    };
}

/// The fair pick of `general_candidate!` (below).
macro_rules! fair_pick {
    ($dialect:tt, [$tenant:literal, $($p:literal),*]) => {
        concat!(
            "(SELECT CASE WHEN f.key = '' THEN (SELECT t.", row_key!($dialect), " ",
            in_group!($dialect, [$tenant, $($p),*], "IS NULL", ""),
            " ORDER BY t.created_at, t.id LIMIT 1", candidate_lock!($dialect),
            ") ELSE (SELECT t.", row_key!($dialect), " ",
            in_group!($dialect, [$tenant, $($p),*], "= ", "f.key"),
            " ORDER BY t.created_at, t.id LIMIT 1", candidate_lock!($dialect),
            ") END FROM (SELECT g.key FROM concurrency_keys g WHERE g.tenant_id = ", $tenant,
            " AND (g.key = '' OR g.held < g.limit_value) AND CASE WHEN g.key = '' \
              THEN EXISTS (SELECT 1 ",
            in_group!($dialect, [$tenant, $($p),*], "IS NULL", ""),
            ") ELSE EXISTS (SELECT 1 ",
            in_group!($dialect, [$tenant, $($p),*], "= ", "g.key"),
            ") END ORDER BY g.last_claimed_at NULLS FIRST, g.key LIMIT 1) f)"
        )
    };
}

/// Where the probe for pending keyed tasks looks: the partial index of
/// exactly those (`tasks_keyed_claimable`). SQLite, without statistics,
/// took `tasks_concurrency_key`, whose entries of a key start with its
/// finished tasks, so the probe stepped over every finished keyed task
/// before the first pending one (measured with the claim statement on a
/// copy of the schema: a claim, start and completion cost 0.39 ms against
/// 0.26 ms with the right index, after 3,000 keyed tasks had finished).
macro_rules! keyed_pending_from {
    (sqlite) => {
        "FROM tasks l INDEXED BY tasks_keyed_claimable"
    };
    (postgres) => {
        "FROM tasks l"
    };
}

/// The general candidate (tasks that prefer no assignee), in three forms
/// (`$pick`):
///
/// - `fair`: the fair pick ([`crate::limits`]): the top priority among
///   eligible tasks (the first of the claim-order walk), then the group
///   whose last claim is oldest among those with an eligible task of that
///   priority (a walk of `concurrency_keys` by `last_claimed_at` that stops
///   at the first group with one, each an index probe), then that group's
///   oldest such task, locked. When the pick finds nothing (its task was
///   taken by a concurrent claim: `SKIP LOCKED`) the claim-order candidate
///   is taken instead, so a claim never comes back empty while a task is
///   eligible.
/// - `plain`: the claim-order candidate, as before flow limits: right while
///   the tenant has no pending task with a concurrency key.
/// - `probe`: one probe of the partial index `tasks_keyed_claimable` picks
///   `fair` or `plain` inside the statement (SQLite).
///
/// PostgreSQL runs `plain` and `fair` as two statements and probes first
/// ([`KEYED_PENDING_POSTGRES`], and an `IF` in [`CLAIM_EACH_FUNCTION`]):
/// the fair pick is planned at every execution with its values (its
/// generic plan walks every pending task: 40 s over 700 of them), and a
/// plan of `probe` plans the fair pick's dozens of subqueries even for a
/// tenant that never used a key: 22 to 28 ms of planning per claim against
/// 2 to 9 ms for `plain`, measured on the 64-claimer test's database, which
/// made that test CPU-bound in the planner. The combined claim, the hot
/// path, makes the fair pick with small statements instead
/// ([`function`]'s `fair_walk!`) and runs them and the claim on cached
/// generic plans (see [`CLAIM_EACH_FUNCTION`] for why those plans are
/// safe); the one-request statement [`CLAIM_POSTGRES_FAIR`], used only
/// with group commit off, keeps the one-statement pick. SQLite compiles a statement once, so it
/// keeps the one statement.
macro_rules! general_candidate {
    (probe, $dialect:tt, [$tenant:literal, $($p:literal),*]) => {
        concat!(
            "CASE WHEN EXISTS (SELECT 1 ", keyed_pending_from!($dialect), " WHERE l.tenant_id = ", $tenant,
            " AND l.state = 'pending' AND l.concurrency_key IS NOT NULL) THEN ",
            general_candidate!(fair, $dialect, [$tenant, $($p),*]),
            " ELSE ",
            general_candidate!(plain, $dialect, [$tenant, $($p),*]),
            " END"
        )
    };
    (fair, $dialect:tt, [$tenant:literal, $($p:literal),*]) => {
        concat!(
            "COALESCE(",
            fair_pick!($dialect, [$tenant, $($p),*]),
            ", ",
            general_candidate!(plain, $dialect, [$tenant, $($p),*]),
            ")"
        )
    };
    (plain, $dialect:tt, [$tenant:literal, $($p:literal),*]) => {
        candidate!($dialect, [$tenant, $($p),*], " AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL")
    };
    // The task the combined claim's fair walk picked (`a_pick`,
    // [`fair_walk!`]), else the claim-order candidate.
    (picked, $dialect:tt, [$tenant:literal, $($p:literal),*]) => {
        concat!(
            "COALESCE(a_pick, ",
            general_candidate!(plain, $dialect, [$tenant, $($p),*]),
            ")"
        )
    };
}

/// Where a claim moves its task, and its `started_at`: `claimed` (the
/// one-request claim); `started`, a batched claim with `start: true`, which
/// moves the task straight to `in_progress` in the same row version (one
/// non-HOT update and one set of index entries a task, not two); `asked`,
/// the combined-claim function's choice by its `p_start` argument. A task
/// whose cancellation was requested stays `claimed`, as a start request
/// would leave it ([`super::fast_path`]).
macro_rules! claim_moves {
    (claimed, $now:literal) => {
        "state = 'claimed', started_at = NULL"
    };
    (started, $now:literal) => {
        concat!(
            "state = CASE WHEN cancel_requested THEN 'claimed' ELSE 'in_progress' END, \
             started_at = CASE WHEN cancel_requested THEN NULL ELSE ",
            $now,
            " END"
        )
    };
    (asked, $now:literal) => {
        concat!(
            "state = CASE WHEN p_start AND NOT cancel_requested THEN 'in_progress' ELSE 'claimed' END, \
             started_at = CASE WHEN p_start AND NOT cancel_requested THEN ",
            $now,
            " END"
        )
    };
}

/// What a claim writes into its task: where it moves ([`claim_moves!`]),
/// its assignee (`$agent`, `$worker`: SQL expressions) and its instants.
/// One source for the one-agent claim and the combined claim's bulk claim
/// ([`function`]'s `bulk_claim!`).
macro_rules! claim_set {
    ($moves:ident, $agent:literal, $worker:literal, $now:literal) => {
        concat!(
            claim_moves!($moves, $now),
            ", assigned_agent_id = ",
            $agent,
            ", assigned_worker_id = ",
            $worker,
            ", claimed_at = ",
            $now,
            ", completed_at = NULL, updated_at = ",
            $now,
            // The lease (run control §4) starts at the claim.
            ", last_heartbeat_at = ",
            $now
        )
    };
}

/// The claim `UPDATE` without its `RETURNING`, over the named parameters:
/// tenant, agent, worker, now, workflow filter, claimer tags, runnable
/// environments, environment filter ([`eligible!`]); `$pick` is the form of
/// the general candidate (`general_candidate!`), `$moves` where the task
/// goes ([`claim_moves!`]).
macro_rules! claim_update {
    ($pick:ident, $dialect:tt, $moves:ident, $tenant:literal, $agent:literal, $worker:literal,
     $now:literal, $workflow:literal, $tags:literal, $runnable:literal, $env:literal) => {
        concat!(
            "UPDATE tasks SET ",
            claim_set!($moves, $agent, $worker, $now),
            " WHERE ",
            row_key!($dialect),
            " = COALESCE(",
            preferred_candidate!(
                $dialect,
                [
                    $tenant, $agent, $worker, $now, $workflow, $tags, $runnable, $env
                ],
                " AND t.preferred_agent_id = ",
                $agent
            ),
            ", ",
            preferred_candidate!(
                $dialect,
                [
                    $tenant, $agent, $worker, $now, $workflow, $tags, $runnable, $env
                ],
                " AND t.preferred_worker_id = ",
                $worker
            ),
            ", ",
            general_candidate!(
                $pick,
                $dialect,
                [
                    $tenant, $agent, $worker, $now, $workflow, $tags, $runnable, $env
                ]
            ),
            ") AND NOT EXISTS (SELECT 1 FROM tasks h WHERE h.assigned_agent_id = ",
            $agent,
            " AND h.state IN ('claimed', 'in_progress'))"
        )
    };
}

mod function;
mod one_request;
mod sqlite_bulk;

pub(crate) use function::CLAIM_EACH_FUNCTION;
pub(super) use function::CLAIM_EACH_POSTGRES;
pub(super) use one_request::{
    CLAIM_POSTGRES, CLAIM_POSTGRES_FAIR, CLAIM_POSTGRES_FAIR_STARTED, CLAIM_POSTGRES_STARTED,
    CLAIM_SQLITE, CLAIM_SQLITE_STARTED, KEYED_PENDING_POSTGRES,
};
pub(super) use sqlite_bulk::{
    BULK_CANDIDATES_SQLITE, BULK_UPDATE_SQLITE, BULK_UPDATE_SQLITE_STARTED, HOLDERS_SQLITE,
    KEYED_PENDING_SQLITE, PREFERRED_PENDING_SQLITE,
};
