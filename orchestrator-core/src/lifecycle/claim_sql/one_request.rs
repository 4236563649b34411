//! The one-request claim statements: one agent's claim, over placeholders
//! (`$1` to `$8`), in each dialect and form.

use crate::tasks::rows::task_columns;

/// Whether the tenant (`$1`) has a pending task with a concurrency key: one
/// probe of the partial index `tasks_keyed_claimable`, which picks the
/// PostgreSQL claim statement ([`general_candidate!`]).
pub(in crate::lifecycle) const KEYED_PENDING_POSTGRES: &str = "SELECT EXISTS (SELECT 1 FROM tasks l WHERE l.tenant_id = $1 \
     AND l.state = 'pending' AND l.concurrency_key IS NOT NULL)";

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
pub(in crate::lifecycle) const CLAIM_SQLITE: &str = claim_statement!(probe, sqlite, claimed);
/// One claim, for the request's agent, in a tenant without pending keyed
/// tasks ([`KEYED_PENDING_POSTGRES`]).
pub(in crate::lifecycle) const CLAIM_POSTGRES: &str = claim_statement!(plain, postgres, claimed);
/// One claim, for the request's agent, in a tenant with pending keyed
/// tasks: the fair pick ([`general_candidate!`]).
pub(in crate::lifecycle) const CLAIM_POSTGRES_FAIR: &str =
    claim_statement!(fair, postgres, claimed);

/// [`CLAIM_SQLITE`] for a batched claim with `start: true`: the task goes
/// straight to `in_progress` ([`claim_moves!`]).
pub(in crate::lifecycle) const CLAIM_SQLITE_STARTED: &str =
    claim_statement!(probe, sqlite, started);
/// [`CLAIM_POSTGRES`] for a batched claim with `start: true`.
pub(in crate::lifecycle) const CLAIM_POSTGRES_STARTED: &str =
    claim_statement!(plain, postgres, started);
/// [`CLAIM_POSTGRES_FAIR`] for a batched claim with `start: true`.
pub(in crate::lifecycle) const CLAIM_POSTGRES_FAIR_STARTED: &str =
    claim_statement!(fair, postgres, started);
