//! ACP sessions: an ACP-registered agent opens a session per
//! run, or one reusable session per workflow; `/acp/claim` claims, starts
//! and opens a session in one transaction.
//!
//! [`sessions`] owns the session rows and their operations; [`claim`] runs
//! the claim engine of `crate::lifecycle::claim` and adds the session.

pub mod claim;
pub mod sessions;
