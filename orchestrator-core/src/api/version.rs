//! `GET /api/v1/version`: which server a client talks to.

use serde::{Deserialize, Serialize};

/// The server's release and the API version it serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServerVersion {
    /// The server's release, e.g. `0.1.0` (semantic versioning).
    pub version: String,
    /// The route prefix version: `v1`.
    pub api_version: String,
}
