//! Tasks: the record an agent claims and completes.
//!
//! This module owns the task itself: its row (`rows`), its state machine
//! ([`state`], one `transition` function), creation (`create`), reads
//! (`read`), handoffs, artifacts and claim credentials. It never reaches
//! into workflows: what moves a task and what that sets off in its workflow
//! (claims, start/complete/fail, operator actions) lives one layer up, in
//! [`crate::lifecycle`]; workflows build on this module for the tasks they
//! create and cancel.

pub(crate) mod acting;
pub(crate) mod artifacts;
pub mod counters;
pub(crate) mod create;
mod create_batch;
mod credentials;
pub(crate) mod handoffs;
pub(crate) mod insert;
mod read;
pub(crate) mod retry;
mod row_decode;
pub(crate) mod rows;
pub mod state;

pub(crate) use rows::{TaskRow, task_columns};

/// `timeout_minutes` of a task created without one (3 hours): how long it
/// may be held before it fails with `timeout`.
pub const DEFAULT_TIMEOUT_MINUTES: i64 = 180;

/// The largest `timeout_minutes` a task may ask for (4 hours); the
/// smallest is 1.
pub const MAX_TIMEOUT_MINUTES: i64 = 240;

/// The largest `max_retries` a task may ask for; the smallest is 0 (no
/// retry).
pub const MAX_RETRIES: i64 = 10;

/// The longest `delay_seconds` / `ttl_seconds` (a year).
pub const MAX_DELAY_SECONDS: i64 = 31_536_000;
