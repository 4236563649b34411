//! Execution environments: the container images tasks run in, their
//! verification verdict and the operators' support posture.
//!
//! Requests are camelCase as the contract shows (`pullPolicy`,
//! `bootstrapCommands`, ...); records are snake_case like every other record.

use super::Timestamp;
use super::wire_enum::wire_enum;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// The verification contract a verdict was produced under.
pub const VERIFICATION_CONTRACT_VERSION: &str = "orch-probe/1";

wire_enum!(
    /// When the runtime pulls the image before a run.
    #[derive(Default)]
    PullPolicy {
        #[default]
        IfNotPresent = "if-not-present",
        Always = "always",
        Never = "never",
    }
);

wire_enum!(
    /// Where a record came from: created by hand or seeded from the catalog.
    SourceKind { Custom = "custom", Catalog = "catalog" }
);

wire_enum!(
    /// The verification verdict: `unknown` until verified, and again after an
    /// edit that changes what the verdict was about (image, limits, bootstrap).
    #[derive(Default)]
    CompatibilityStatus {
        #[default]
        Unknown = "unknown",
        Compatible = "compatible",
        Incompatible = "incompatible",
    }
);

wire_enum!(
    /// The operators' posture: a blocked environment cannot be chosen for a task.
    SupportStatus { Approved = "approved", Blocked = "blocked" }
);

/// An execution environment record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExecutionEnvironment {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    pub source_kind: SourceKind,
    pub catalog_key: Option<String>,
    pub catalog_version: Option<i64>,
    pub image: String,
    pub cpu: String,
    pub memory: String,
    pub pull_policy: PullPolicy,
    pub compatibility_status: CompatibilityStatus,
    pub compatibility_errors: Vec<String>,
    pub support_status: Option<SupportStatus>,
    pub verification_contract_version: Option<String>,
    pub verified_metadata: Value,
    pub tool_capabilities: Value,
    pub bootstrap_commands: Vec<String>,
    pub bootstrap_required_domains: Vec<String>,
    pub operator_notes: String,
    /// One line for routing prompts, built from the verified facts.
    pub agent_hint: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `POST /execution-environments`. `name` and `image` are required; cpu
/// defaults to `1`, memory to `1g`, pull policy to `if-not-present`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateExecutionEnvironment {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub image: String,
    /// CPUs, a positive decimal (`"1"`, `"0.5"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Bytes with an optional unit: `512m`, `2g`, `2Gi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<PullPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_commands: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_required_domains: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `PATCH /execution-environments/:id`: at least one field. A change of
/// image, limits, pull policy, bootstrap commands or domains sets the verdict
/// back to `unknown`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchExecutionEnvironment {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<PullPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_commands: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_required_domains: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

impl PatchExecutionEnvironment {
    /// Whether the patch names any field.
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.description.is_none()
            && self.operator_notes.is_none()
            && !self.changes_verdict()
    }

    /// Whether the patch touches what a verification verdict is about.
    pub fn changes_verdict(&self) -> bool {
        self.image.is_some()
            || self.cpu.is_some()
            || self.memory.is_some()
            || self.pull_policy.is_some()
            || self.bootstrap_commands.is_some()
            || self.bootstrap_required_domains.is_some()
    }
}

/// `POST /execution-environments/from-catalog`. Without `catalogVersion` the
/// newest version of the key is used; `name` defaults to the catalog's.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateFromCatalog {
    pub catalog_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_version: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `POST /execution-environments/:id/support`: `null` clears the posture.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SetSupportStatus {
    pub support_status: Option<SupportStatus>,
}

/// `GET /execution-environments` filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EnvironmentFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compatibility_status: Option<CompatibilityStatus>,
    /// `approved`, `blocked`, or `none` for environments without a posture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub support_status: Option<String>,
    /// Case-insensitive substring of name, description or image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<String>,
}

/// `POST /execution-environments/:id/verify` answer (also stored on the
/// record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Verification {
    pub compatibility_status: CompatibilityStatus,
    pub compatibility_errors: Vec<String>,
    pub verification_contract_version: String,
    pub verified_metadata: Value,
    pub tool_capabilities: Value,
    /// What the probe printed (stdout then stderr), at most 64 KiB.
    pub probe_output: String,
}

/// One base environment of the catalog (`GET
/// /execution-environments/catalog`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EnvironmentCatalogEntry {
    pub key: String,
    pub version: i64,
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub image: String,
    pub cpu: String,
    pub memory: String,
    #[serde(default)]
    pub pull_policy: PullPolicy,
    #[serde(default)]
    pub bootstrap_commands: Vec<String>,
    #[serde(default)]
    pub bootstrap_required_domains: Vec<String>,
    /// Commands the image is declared to provide (checked by verify).
    #[serde(default)]
    pub tools: Vec<String>,
}
