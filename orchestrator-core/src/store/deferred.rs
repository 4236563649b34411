//! Rows that requests leave for their write batch to write at its commit
//! ([`super::Tx::defer`]): the kinds of such rows and how a batch flushes
//! them.

use super::Access;
use crate::api::Event;
use crate::error::Result;
use sqlx::Postgres;
use sqlx::error::BoxDynError;
use sqlx::postgres::PgArguments;

/// Writes every deferred row of one kind queued in a batch (in the order
/// they were queued), on the batch's connection just before it commits, and
/// returns the events to publish (empty for rows that are not events). On
/// PostgreSQL a kind that [hosts](DeferKind::hosts) is handed the other
/// kinds' rows as `WITH` parts to run in its own statement.
pub(crate) type FlushFn = for<'a> fn(
    &'a mut dyn Access,
    Vec<Box<dyn std::any::Any + Send>>,
    Option<WithParts>,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Vec<Event>>> + Send + 'a>,
>;

/// A kind's deferred rows as data-modifying statements for PostgreSQL: binds
/// their values into the arguments (placeholders numbered after the values
/// already there) and returns each statement's text, to run as a `WITH`
/// part of the hosting kind's statement.
pub(crate) type WithPartFn =
    fn(Vec<Box<dyn std::any::Any + Send>>, &mut PgArguments) -> Result<Vec<String>>;

/// Other kinds' deferred rows, as statements and their bound values, for
/// the hosting kind to prefix to its own statement as `WITH` parts.
pub(crate) struct WithParts {
    pub statements: Vec<String>,
    pub args: PgArguments,
}

/// A kind of row that requests leave for their batch to write at its
/// commit ([`super::Tx::defer`]).
///
/// Why the `WITH` parts: on PostgreSQL each statement of a batch is a round
/// trip that the one writer waits out, and a lifecycle batch flushed two
/// kinds (its events and its platform log rows) as two statements before
/// its `COMMIT`. Run as one statement (`WITH l AS (INSERT INTO logs ...)
/// INSERT INTO events ... RETURNING ...`), they cost one round trip
/// (BENCHMARKS.md, item 18). SQLite's statements are calls into the same
/// process; it flushes each kind on its own.
pub(crate) struct DeferKind {
    /// Rows of one kind are written together, by one call of `flush`.
    pub name: &'static str,
    pub flush: FlushFn,
    /// PostgreSQL: the kind's rows as `WITH` parts of a hosting kind's
    /// statement, where the batch has one.
    pub with_part: Option<WithPartFn>,
    /// PostgreSQL: whether `flush` runs other kinds' [`WithParts`] in its
    /// statement.
    pub hosts: bool,
}

/// A row a request leaves for its batch to write at commit ([`super::Tx::defer`]).
pub(crate) struct Deferred {
    pub(super) kind: &'static DeferKind,
    pub(super) row: Box<dyn std::any::Any + Send>,
}

/// Binds `value` as the next value of `args`, for a statement assembled
/// from parts that each number their placeholders after the values already
/// bound ([`WithParts`]).
pub(crate) fn push_arg<'q, T>(
    args: &mut PgArguments,
    value: T,
) -> std::result::Result<(), BoxDynError>
where
    T: sqlx::Encode<'q, Postgres> + sqlx::Type<Postgres>,
{
    sqlx::Arguments::add(args, value)
}

/// How many values `args` holds: the next placeholder is `$count + 1`.
pub(crate) fn arg_count(args: &PgArguments) -> usize {
    sqlx::Arguments::len(args)
}
