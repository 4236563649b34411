//! The PostgreSQL function of combined claims ([`CLAIM_EACH_FUNCTION`]):
//! the one-agent claim for each agent of a call, over PL/pgSQL variables
//! instead of placeholders, with its fair pick and its bulk claim.

/// [`eligible!`] over the function's variables for the agent being
/// claimed for (`agent_vars!`, below), as its fair pick, its bulk claim's walk
/// and its claim `UPDATE` read them.
macro_rules! function_eligible {
    () => {
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
            function_eligible!(),
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
            function_eligible!(),
            " AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL \
              AND t.concurrency_key IS NULL AND t.priority_rank = a_rank \
              ORDER BY t.created_at, t.id LIMIT 1 FOR UPDATE OF t SKIP LOCKED; \
                 ELSE \
                   SELECT t.ctid INTO a_pick FROM tasks t WHERE ",
            function_eligible!(),
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
/// (`a_fair`): [`super::KEYED_PENDING_POSTGRES`], run as dynamic SQL, planned with
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
            function_eligible!(),
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

/// The function a combined claim calls ([`crate::lifecycle::claim_each`]): for each
/// agent of the parallel arrays, in order, the one-request claim (the same
/// `UPDATE`, over variables or placeholders instead of the request's, in its
/// `fair` or `plain` form by the same probe as [`super::KEYED_PENDING_POSTGRES`],
/// run once per tenant of the call); when it claims nothing, the task the
/// agent already holds, if any. One row per agent: `claim_outcome` is
/// `claimed`, `held` or `none`, with the task.
///
/// `p_limit` is for a worker's batched claim ([`crate::lifecycle::claim_batch`]): when
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
pub(in crate::lifecycle) const CLAIM_EACH_POSTGRES: &str = "SELECT c.claim_agent, c.claim_outcome, (c.claim_task).* \
     FROM pg_temp.orch_claim_each($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) c";
