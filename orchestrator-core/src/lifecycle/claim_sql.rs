//! The text of the claim statements: the one-request claim of each dialect,
//! and the PostgreSQL function that runs it for every agent of a combined
//! claim ([`super::claim_each`]), all built from the same macros so the
//! eligibility rules have one source (the rules: [`super::claim`]).

use crate::tasks::rows::task_columns;

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

/// The fair pick of [`general_candidate!`].
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
/// path, makes the fair pick with small statements instead ([`fair_walk!`])
/// and runs them and the claim on cached generic plans (see
/// [`CLAIM_EACH_FUNCTION`] for why those plans are safe); the one-request
/// statement [`CLAIM_POSTGRES_FAIR`], used only with group commit off,
/// keeps the one-statement pick. SQLite compiles a statement once, so it
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

/// The fair pick of the combined claim ([`CLAIM_EACH_FUNCTION`]), as
/// PL/pgSQL over its variables: the same choice as [`fair_pick!`], made by
/// small statements instead of one. First the top priority among eligible
/// tasks that prefer no assignee (the claim-order walk, `LIMIT 1`); then
/// the groups in the order of their last claim (`concurrency_keys_fair`),
/// skipping those at their limit; for each, one probe for its oldest
/// eligible task at that priority (`tasks_keyed_claimable`, or
/// `tasks_claimable_keyless` for the group without a key), locked, until
/// one is found. It leaves the task's `ctid` in `a_pick` (`NULL` when none:
/// the claim then takes the claim-order candidate).
///
/// The top priority is found once per call for agents that filter alike
/// (`a_sig`: tenant, workflow, tags, environments) and found again only
/// when the walk finds no task of it (all taken, or their groups filled,
/// by the claims before): a priority from an earlier agent can only be
/// too high, never too low, among claims of one call, so it never takes
/// a task ahead of a more urgent one (a task committed while the call runs
/// is as if created after it: the next call sees it).
///
/// Each statement has a fixed shape, so each runs on the function's cached
/// generic plan like the plain claim: planning the one-statement pick at
/// every claim cost 4.7 ms against 3.7 ms of execution (`orch bench
/// limits`, 100 keys), and its generic plan walked every pending task.
macro_rules! fair_walk {
    () => {
        concat!(
            "a_sig := format('%s|%s|%s|%s|%s', a_tenant, coalesce(a_workflow::text, '*'), a_tags, \
               a_runnable, coalesce(a_env::text, '*')); \
             LOOP \
               a_fresh := a_sig IS DISTINCT FROM a_ranked; \
               IF a_fresh THEN \
                 SELECT t.priority_rank INTO a_rank FROM tasks t WHERE ",
            eligible!(
                postgres,
                "a_tenant",
                "a_agent",
                "a_worker",
                "a_now",
                "a_workflow",
                "a_tags",
                "a_runnable",
                "a_env"
            ),
            " AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL \
              ORDER BY t.priority_rank DESC, t.created_at, t.id LIMIT 1; \
                 IF NOT FOUND THEN a_ranked := NULL; EXIT; END IF; \
                 a_ranked := a_sig; \
               END IF; \
               FOR a_key IN SELECT g.key FROM concurrency_keys g WHERE g.tenant_id = a_tenant \
                   AND (g.key = '' OR g.held < g.limit_value) \
                   ORDER BY g.last_claimed_at NULLS FIRST, g.key LOOP \
                 IF a_key = '' THEN \
                   SELECT t.ctid INTO a_pick FROM tasks t WHERE ",
            eligible!(
                postgres,
                "a_tenant",
                "a_agent",
                "a_worker",
                "a_now",
                "a_workflow",
                "a_tags",
                "a_runnable",
                "a_env"
            ),
            " AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL \
              AND t.concurrency_key IS NULL AND t.priority_rank = a_rank \
              ORDER BY t.created_at, t.id LIMIT 1 FOR UPDATE OF t SKIP LOCKED; \
                 ELSE \
                   SELECT t.ctid INTO a_pick FROM tasks t WHERE ",
            eligible!(
                postgres,
                "a_tenant",
                "a_agent",
                "a_worker",
                "a_now",
                "a_workflow",
                "a_tags",
                "a_runnable",
                "a_env"
            ),
            " AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL \
              AND t.concurrency_key = a_key AND t.priority_rank = a_rank \
              ORDER BY t.created_at, t.id LIMIT 1 FOR UPDATE OF t SKIP LOCKED; \
                 END IF; \
                 EXIT WHEN a_pick IS NOT NULL; \
               END LOOP; \
               EXIT WHEN a_pick IS NOT NULL OR a_fresh; \
               a_ranked := NULL; \
             END LOOP; "
        )
    };
}

/// Whether the tenant (`$1`) has a pending task with a concurrency key: one
/// probe of the partial index `tasks_keyed_claimable`, which picks the
/// PostgreSQL claim statement ([`general_candidate!`]).
pub(super) const KEYED_PENDING_POSTGRES: &str = "SELECT EXISTS (SELECT 1 FROM tasks l WHERE l.tenant_id = $1 \
     AND l.state = 'pending' AND l.concurrency_key IS NOT NULL)";

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
/// ([`bulk_claim!`]).
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
/// the general candidate ([`general_candidate!`]), `$moves` where the task
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

/// A one-request claim statement over the placeholders `$1` to `$8`,
/// returning the task: `$pick` and `$moves` as in [`claim_update!`].
macro_rules! claim_statement {
    ($pick:ident, $dialect:tt, $moves:ident) => {
        concat!(
            claim_update!(
                $pick, $dialect, $moves, "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8"
            ),
            " RETURNING ",
            task_columns!()
        )
    };
}

/// One claim, for the request's agent.
pub(super) const CLAIM_SQLITE: &str = claim_statement!(probe, sqlite, claimed);
/// One claim, for the request's agent, in a tenant without pending keyed
/// tasks ([`KEYED_PENDING_POSTGRES`]).
pub(super) const CLAIM_POSTGRES: &str = claim_statement!(plain, postgres, claimed);
/// One claim, for the request's agent, in a tenant with pending keyed
/// tasks: the fair pick ([`general_candidate!`]).
pub(super) const CLAIM_POSTGRES_FAIR: &str = claim_statement!(fair, postgres, claimed);

/// [`CLAIM_SQLITE`] for a batched claim with `start: true`: the task goes
/// straight to `in_progress` ([`claim_moves!`]).
pub(super) const CLAIM_SQLITE_STARTED: &str = claim_statement!(probe, sqlite, started);
/// [`CLAIM_POSTGRES`] for a batched claim with `start: true`.
pub(super) const CLAIM_POSTGRES_STARTED: &str = claim_statement!(plain, postgres, started);
/// [`CLAIM_POSTGRES_FAIR`] for a batched claim with `start: true`.
pub(super) const CLAIM_POSTGRES_FAIR_STARTED: &str = claim_statement!(fair, postgres, started);

/// The claim variables of the function's agent `$i` (an index into its
/// parameter arrays): tenant, agent, worker, the filters, the tags and the
/// environments it may run ([`CLAIM_EACH_FUNCTION`]).
macro_rules! agent_vars {
    ($i:literal) => {
        concat!(
            "a_tenant := p_tenant[",
            $i,
            "]; a_agent := p_agent[",
            $i,
            "]; \
             a_worker := p_worker[",
            $i,
            "]; a_workflow := p_workflow[",
            $i,
            "]; \
             a_tags := p_tags[",
            $i,
            "]; a_env := p_env[",
            $i,
            "]; a_runnable := '{}'; \
             IF jsonb_array_length(p_runnable[",
            $i,
            "]) > 0 THEN \
               a_runnable := ARRAY(SELECT jsonb_array_elements_text(p_runnable[",
            $i,
            "])::uuid); \
             END IF; "
        )
    };
}

/// Whether the tenant `a_tenant` has a pending task with a concurrency key
/// (`a_fair`): [`KEYED_PENDING_POSTGRES`], run as dynamic SQL, planned with
/// its value (it runs once a call).
macro_rules! keyed_probe {
    () => {
        concat!(
            "EXECUTE $probe$",
            "SELECT EXISTS (SELECT 1 FROM tasks l WHERE l.tenant_id = $1 \
               AND l.state = 'pending' AND l.concurrency_key IS NOT NULL)",
            "$probe$ INTO a_fair USING a_tenant; a_probed := a_tenant; "
        )
    };
}

/// The bulk claim of [`CLAIM_EACH_FUNCTION`]: where its free agents (those
/// that hold no task) would each take the plain claim's candidate, one
/// statement picks their tasks and one `UPDATE` claims them all, instead of
/// a claim statement per agent.
///
/// Why: with the claims of a batch one statement (item 26), the writer
/// backend spent 57% of its samples inside this function, most of it per
/// agent: starting the claim statement's executor (16%), its candidate
/// subqueries (18%) and their index descents (16%), 32 times a batch of
/// 32 (bench/HISTORY.md item 27). The bulk claim pays those once a call.
///
/// It gives each agent the task the per-agent loop would give it, so it
/// runs only where the loop's choice is the claim-order walk for every
/// free agent alike:
///
/// - the free agents claim with the same filters (tenant, workflow, tags,
///   environments) and are distinct;
/// - the tenant has no pending task with a concurrency key (no fair pick);
/// - no pending task prefers one of these agents or their workers (the
///   preferred candidates, which come first, are empty);
/// - it takes the walk's tasks in order only up to the first that has a
///   concurrency or rate key (whose limit a later task of the same key in
///   the same statement could overrun): the agents after it claim one by
///   one, as before, and see the bulk claim's tasks as taken.
///
/// The lookups of held and preferred tasks read their index in its own
/// order (`ORDER BY` its first column, `LIMIT 1` for the probes, which
/// `EXISTS` would drop): under the function's generic plans with sorts
/// off, that pins the index whose condition they are. Written as plain
/// filters, the plans planned on an empty table walked every pending task
/// (`tasks_claimable`) or every held one (`tasks_held_since`) instead, and
/// the lifecycle after a million finished tasks ran at 0.77x of the empty
/// database's, with claim p99 2.7x (`orch bench lifecycle --preload`).
///
/// Agent `k` of the free agents gets the walk's task `k`, as the loop
/// would give it. When the walk ran out (no keyed task cut it short), the
/// free agents left over find nothing without a statement each (`a_more`
/// false). The task moves as the one-agent claim moves it ([`claim_set!`]);
/// the flow-limit triggers and `tasks_held_by_agent` see the same row
/// changes.
macro_rules! bulk_claim {
    () => {
        concat!(
            "FOR i IN 1 .. coalesce(array_length(p_agent, 1), 0) LOOP \
               CONTINUE WHEN p_agent[i] = ANY(a_busy); \
               IF p_agent[i] = ANY(a_free_agents) OR (cardinality(a_free) > 0 AND ( \
                   p_tenant[i] IS DISTINCT FROM p_tenant[a_free[1]] \
                   OR p_workflow[i] IS DISTINCT FROM p_workflow[a_free[1]] \
                   OR p_tags[i] IS DISTINCT FROM p_tags[a_free[1]] \
                   OR p_runnable[i] IS DISTINCT FROM p_runnable[a_free[1]] \
                   OR p_env[i] IS DISTINCT FROM p_env[a_free[1]])) THEN \
                 a_same := false; EXIT; \
               END IF; \
               a_free := a_free || i; a_free_agents := a_free_agents || p_agent[i]; \
               a_workers := a_workers || p_worker[i]; \
             END LOOP; \
             a_n := least(cardinality(a_free), p_limit); \
             IF a_same AND a_n > 0 THEN ",
            agent_vars!("a_free[1]"),
            keyed_probe!(),
            "IF NOT a_fair \
                 AND (SELECT t.preferred_agent_id FROM tasks t WHERE t.state = 'pending' \
                   AND t.preferred_agent_id IS NOT NULL AND t.preferred_agent_id = ANY(a_free_agents) \
                   ORDER BY t.preferred_agent_id LIMIT 1) IS NULL \
                 AND (SELECT t.preferred_worker_id FROM tasks t WHERE t.state = 'pending' \
                   AND t.preferred_worker_id IS NOT NULL AND t.preferred_worker_id = ANY(a_workers) \
                   ORDER BY t.preferred_worker_id LIMIT 1) IS NULL THEN \
                 a_more := false; \
                 FOR a_tid, a_plain IN SELECT t.ctid, \
                     t.concurrency_key IS NULL AND t.rate_limit_key IS NULL FROM tasks t WHERE ",
            eligible!(
                postgres,
                "a_tenant",
                "a_agent",
                "a_worker",
                "a_now",
                "a_workflow",
                "a_tags",
                "a_runnable",
                "a_env"
            ),
            " AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL \
                     ORDER BY t.priority_rank DESC, t.created_at, t.id LIMIT a_n \
                     FOR UPDATE OF t SKIP LOCKED LOOP \
                   IF NOT a_plain THEN a_more := true; EXIT; END IF; \
                   a_tids := a_tids || a_tid; \
                 END LOOP; \
                 FOR a_row IN UPDATE tasks SET ",
            claim_set!(
                asked,
                "p_agent[a_free[c.ord::integer]]",
                "p_worker[a_free[c.ord::integer]]",
                "a_now"
            ),
            " FROM unnest(a_tids) WITH ORDINALITY AS c(tid, ord) WHERE tasks.ctid = c.tid \
                     RETURNING tasks.* LOOP \
                   claim_agent := a_row.assigned_agent_id; claim_outcome := 'claimed'; \
                   claim_task := a_row; RETURN NEXT; \
                   a_bulk := a_bulk || a_row.assigned_agent_id; \
                 END LOOP; \
                 a_taken := cardinality(a_bulk); \
               END IF; \
             END IF; "
        )
    };
}

/// SQLite's bulk claim of a batch (the same cases as [`bulk_claim!`],
/// checked by [`super::claim_batch`]): whether the tenant (`$1`) has a
/// pending task with a concurrency key.
pub(super) const KEYED_PENDING_SQLITE: &str = "SELECT EXISTS (SELECT 1 FROM tasks l \
     INDEXED BY tasks_keyed_claimable WHERE l.tenant_id = $1 AND l.state = 'pending' \
     AND l.concurrency_key IS NOT NULL)";

/// SQLite's bulk claim: which of the agents (`$1`, a JSON array of hex ids)
/// hold a task.
pub(super) const HOLDERS_SQLITE: &str = "SELECT h.assigned_agent_id FROM tasks h \
     INDEXED BY tasks_held_by_agent WHERE h.assigned_agent_id IN \
     (SELECT unhex(value) FROM json_each($1)) AND h.state IN ('claimed', 'in_progress')";

/// SQLite's bulk claim: whether a pending task prefers one of the agents
/// (`$1`, a JSON array of hex ids) or the worker (`$2`), each an index
/// probe of its preferred index.
pub(super) const PREFERRED_PENDING_SQLITE: &str = "SELECT EXISTS (SELECT 1 FROM tasks t \
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
pub(super) const BULK_CANDIDATES_SQLITE: &str = concat!(
    "SELECT t.id, t.concurrency_key IS NULL AND t.rate_limit_key IS NULL FROM tasks t WHERE ",
    eligible!(sqlite, "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8"),
    " AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL \
     ORDER BY t.priority_rank DESC, t.created_at, t.id LIMIT $9"
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
pub(super) const BULK_UPDATE_SQLITE: &str = bulk_update_sqlite!(claimed);
/// [`bulk_update_sqlite!`] for a batch with `start: true`.
pub(super) const BULK_UPDATE_SQLITE_STARTED: &str = bulk_update_sqlite!(started);

/// The function a combined claim calls ([`super::claim_each`]): for each
/// agent of the parallel arrays, in order, the one-request claim (the same
/// `UPDATE`, over variables or placeholders instead of the request's, in its
/// `fair` or `plain` form by the same probe as [`KEYED_PENDING_POSTGRES`],
/// run once per tenant of the call); when it claims nothing, the task the
/// agent already holds, if any. One row per agent: `claim_outcome` is
/// `claimed`, `held` or `none`, with the task.
///
/// `p_limit` is for a worker's batched claim ([`super::claim_batch`]): when
/// set, the agents that hold a task are looked up first, in one query of
/// the held-task index, and skipped without a row (not a claim each that
/// would find them held), and the loop ends once `p_limit` agents have
/// tried a claim (as many claims as the batch may take, so an idle
/// worker's empty poll costs at most that). It replaces a probe the batch
/// used to send first: one writer round trip (and one planned statement)
/// less per batch. The combined one-request claims pass NULL: every agent
/// gets its row, the held task included.
/// `p_start` is the batch's `start: true`: its tasks go straight to
/// `in_progress` in the claim's own row version ([`claim_moves!`]); the
/// combined one-request claims pass false.
///
/// Each agent's claim sees the claims before it (a later statement of the
/// same transaction), so no two agents get one task. Before the loop, the
/// bulk claim ([`bulk_claim!`]) claims for the free agents at once where
/// each would take the next task of the same walk; the loop then skips the
/// agents it served (and, when the walk ran out, answers `none` for the
/// free agents left without a statement each). A temporary function
/// (`pg_temp`), created by each writer connection as it opens
/// ([`crate::store::StoreOptions::writer_session`]): nothing to migrate, and
/// it always matches this build's statement.
///
/// How each statement is planned, which is most of a claim's cost (measured
/// with `pg_stat_statements` under `orch bench claim-latency`: 0.87 ms of
/// planning against 0.13 ms of execution per claim when every execution was
/// planned, as writer sessions do otherwise, `plan_cache_mode =
/// force_custom_plan`):
///
/// - The `plain` claim, the hot path, runs on a **generic plan**, planned
///   once per connection and cached (the function's `SET plan_cache_mode =
///   force_generic_plan`). A generic plan is not re-planned as tables grow,
///   so its shape must not depend on their size (issue 33, defect 9): the
///   function also turns sequential and bitmap scans off, which leaves the
///   claim one plan whatever the statistics say, empty table or millions
///   of rows: the ordered walk of a claimable index (`LIMIT 1`), primary
///   key probes of `workflows`, `concurrency_keys` and `rate_limits`, the
///   held-task index, and a TID scan for the update itself ([`row_key!`]).
///   The cached plan, logged by `auto_explain` on a freshly migrated (and
///   so analyzed, empty) database, is that plan; a 12-minute soak that grew
///   `tasks` to 108,000 rows with autovacuum off did not drift (BENCHMARKS.md,
///   "Soak on PostgreSQL without autovacuum"). Sorts are off too: every
///   statement here reads an index in the order it wants, and statistics
///   taken while nothing was pending once made the candidates for tasks
///   that prefer the agent walk `tasks_claimable` whole and sort it, where
///   the preferred index answers in order ([`preferred_candidate!`]).
/// - The fair pick ([`fair_walk!`]) is small statements of the same kind,
///   on the same cached generic plans: the top priority (a claim-order
///   walk), the walk of `concurrency_keys_fair`, one probe of a group's
///   index per group; its task then goes to the same claim `UPDATE`
///   (`a_pick`). The one-statement fair pick it replaced was planned at
///   every claim (4.7 ms of planning against 3.7 ms of execution, `orch
///   bench limits` at 0.05x of the plain lifecycle), and that statement's
///   generic plan walked every pending task (35 to 49 s over 700).
/// - The probe for pending keyed tasks and the held-task lookup run as
///   dynamic SQL (`EXECUTE`), planned at each run with their values: they
///   run once a call or off the hot path.
///
/// The `SET` clauses last for the call only (PostgreSQL restores the
/// settings when the function returns), so the rest of the batch keeps
/// custom plans.
pub(crate) const CLAIM_EACH_FUNCTION: &str = concat!(
    "CREATE FUNCTION pg_temp.orch_claim_each(p_tenant uuid[], p_agent uuid[], p_worker uuid[], \
       p_workflow uuid[], p_tags jsonb[], p_runnable jsonb[], p_env uuid[], a_now timestamptz, \
       p_limit integer, p_start boolean) \
     RETURNS TABLE (claim_agent uuid, claim_outcome text, claim_task tasks) \
     LANGUAGE plpgsql \
     SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off \
     SET enable_sort = off \
     AS $orch$ \
     DECLARE \
       a_tenant uuid; a_agent uuid; a_worker uuid; a_workflow uuid; a_tags jsonb; \
       a_runnable uuid[]; a_env uuid; a_row tasks; a_claimed bigint; \
       a_probed uuid; a_fair boolean := false; a_rank integer; a_key text; a_pick tid; \
       a_sig text; a_ranked text; a_fresh boolean; a_taken integer := 0; a_busy uuid[]; \
       a_free integer[] := '{}'; a_free_agents uuid[] := '{}'; a_workers uuid[] := '{}'; \
       a_same boolean := true; a_n integer; a_tid tid; a_plain boolean; a_tids tid[] := '{}'; \
       a_more boolean := true; a_bulk uuid[] := '{}'; \
     BEGIN \
       a_busy := ARRAY(SELECT h.assigned_agent_id FROM tasks h \
         WHERE h.assigned_agent_id = ANY(p_agent) AND h.state IN ('claimed', 'in_progress') \
         ORDER BY h.assigned_agent_id); ",
    bulk_claim!(),
    "FOR i IN 1 .. coalesce(array_length(p_agent, 1), 0) LOOP \
         CONTINUE WHEN p_agent[i] = ANY(a_bulk); \
         EXIT WHEN a_taken >= p_limit; \
         IF p_agent[i] = ANY(a_busy) THEN \
           CONTINUE WHEN p_limit IS NOT NULL; \
         ELSIF NOT a_more THEN \
           CONTINUE WHEN p_limit IS NOT NULL; \
           claim_agent := p_agent[i]; claim_outcome := 'none'; claim_task := NULL; \
           RETURN NEXT; CONTINUE; \
         END IF; \
         a_taken := a_taken + 1; ",
    agent_vars!("i"),
    "claim_agent := a_agent; \
         IF a_probed IS DISTINCT FROM a_tenant THEN ",
    keyed_probe!(),
    "END IF; \
         a_pick := NULL; \
         IF a_fair THEN ",
    fair_walk!(),
    "END IF; ",
    claim_update!(
        picked,
        postgres,
        asked,
        "a_tenant",
        "a_agent",
        "a_worker",
        "a_now",
        "a_workflow",
        "a_tags",
        "a_runnable",
        "a_env"
    ),
    " RETURNING tasks.* INTO a_row; \
         GET DIAGNOSTICS a_claimed = ROW_COUNT; \
         IF a_claimed > 0 THEN \
           claim_outcome := 'claimed'; claim_task := a_row; RETURN NEXT; CONTINUE; \
         END IF; \
         EXECUTE $held$SELECT h.* FROM tasks h WHERE h.assigned_agent_id = $1 \
           AND h.tenant_id = $2 AND h.state IN ('claimed', 'in_progress') \
           ORDER BY h.claimed_at LIMIT 1$held$ INTO a_row USING a_agent, a_tenant; \
         GET DIAGNOSTICS a_claimed = ROW_COUNT; \
         IF a_claimed > 0 THEN \
           claim_outcome := 'held'; claim_task := a_row; \
         ELSE \
           claim_outcome := 'none'; claim_task := NULL; \
         END IF; \
         RETURN NEXT; \
       END LOOP; \
     END $orch$"
);

/// A combined claim: [`CLAIM_EACH_FUNCTION`] over the agents' parameters,
/// its task flattened into the task columns.
pub(super) const CLAIM_EACH_POSTGRES: &str = "SELECT c.claim_agent, c.claim_outcome, (c.claim_task).* \
     FROM pg_temp.orch_claim_each($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) c";
