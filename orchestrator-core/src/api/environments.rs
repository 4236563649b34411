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
        /// Pull only when the image is not on the host (the default).
        #[default]
        IfNotPresent = "if-not-present",
        /// Pull before every run.
        Always = "always",
        /// Never pull: the image must already be on the host.
        Never = "never",
    }
);

wire_enum!(
    /// Where a record came from: created by hand or seeded from the catalog.
    SourceKind {
        /// Created by hand with `POST /execution-environments`.
        Custom = "custom",
        /// Seeded from the environment catalog.
        Catalog = "catalog",
    }
);

wire_enum!(
    /// The verification verdict: `unknown` until verified, and again after an
    /// edit that changes what the verdict was about (image, limits, bootstrap).
    #[derive(Default)]
    CompatibilityStatus {
        /// Not verified since the last change that matters (the default).
        #[default]
        Unknown = "unknown",
        /// The probe ran and found what tasks need.
        Compatible = "compatible",
        /// The probe failed or found something missing (see
        /// `compatibility_errors`).
        Incompatible = "incompatible",
    }
);

wire_enum!(
    /// The operators' posture: a blocked environment cannot be chosen for a task.
    SupportStatus {
        /// Operators vouch for the environment.
        Approved = "approved",
        /// Tasks may not choose the environment (`400`).
        Blocked = "blocked",
    }
);

/// An execution environment record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExecutionEnvironment {
    /// The environment's id; tasks name it as `execution_environment_id`.
    pub id: Uuid,
    /// The environment's name, unique in the tenant.
    pub name: String,
    /// What the environment is for (empty when not given).
    pub description: String,
    /// `custom` (created by hand) or `catalog` (seeded from the catalog).
    pub source_kind: SourceKind,
    /// The catalog entry it was seeded from; null for custom ones.
    pub catalog_key: Option<String>,
    /// The catalog entry's version it was seeded from; null for custom ones.
    pub catalog_version: Option<i64>,
    /// The container image tasks run in.
    pub image: String,
    /// CPUs for a run, a positive decimal (`"1"`, `"0.5"`).
    pub cpu: String,
    /// Memory for a run: bytes with an optional unit (`512m`, `2g`, `2Gi`).
    pub memory: String,
    /// When the runtime pulls the image before a run.
    pub pull_policy: PullPolicy,
    /// The verification verdict (`unknown` until verified).
    pub compatibility_status: CompatibilityStatus,
    /// Why verification found the environment incompatible (empty otherwise).
    pub compatibility_errors: Vec<String>,
    /// The operators' posture; null when none is set.
    pub support_status: Option<SupportStatus>,
    /// The verification contract the verdict was produced under
    /// ([`VERIFICATION_CONTRACT_VERSION`]); null before the first verification.
    pub verification_contract_version: Option<String>,
    /// What the probe found: distro, package manager, runtimes and versions,
    /// baseline commands, domain reachability (`probe: host` when it ran on the
    /// server's host).
    pub verified_metadata: Value,
    /// The commands and tools the probe found in the image.
    pub tool_capabilities: Value,
    /// Shell commands that prepare the container; verification runs them before
    /// the probe.
    pub bootstrap_commands: Vec<String>,
    /// Domains the bootstrap needs; verification checks that they are
    /// reachable.
    pub bootstrap_required_domains: Vec<String>,
    /// Free-text notes from the operators.
    pub operator_notes: String,
    /// One line for routing prompts, built from the verified facts.
    pub agent_hint: String,
    /// When the environment was created.
    pub created_at: Timestamp,
    /// When the environment last changed.
    pub updated_at: Timestamp,
}

/// `POST /execution-environments`. `name` and `image` are required; cpu
/// defaults to `1`, memory to `1g`, pull policy to `if-not-present`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateExecutionEnvironment {
    /// The environment's name, unique in the tenant.
    pub name: String,
    /// What the environment is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The container image tasks run in.
    pub image: String,
    /// CPUs, a positive decimal (`"1"`, `"0.5"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Bytes with an optional unit: `512m`, `2g`, `2Gi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// When the runtime pulls the image (default `if-not-present`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<PullPolicy>,
    /// Shell commands that prepare the container; verification runs them before
    /// the probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_commands: Option<Vec<String>>,
    /// Domains the bootstrap needs; verification checks they are reachable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_required_domains: Option<Vec<String>>,
    /// Free-text notes from the operators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_notes: Option<String>,
    /// Replays the first answer when sent again.
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
    /// A new name, unique in the tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A new description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A new image (sets the verdict back to `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// New CPUs, a positive decimal (sets the verdict back to `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// New memory, bytes with an optional unit (sets the verdict back to
    /// `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// A new pull policy (sets the verdict back to `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<PullPolicy>,
    /// New bootstrap commands, replacing the old ones (sets the verdict back to
    /// `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_commands: Option<Vec<String>>,
    /// New bootstrap domains, replacing the old ones (sets the verdict back to
    /// `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_required_domains: Option<Vec<String>>,
    /// New operator notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_notes: Option<String>,
    /// Replays the first answer when sent again.
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
    /// The catalog entry to seed from (`debian-shell`, `python`, `node`, `rust`
    /// are bundled).
    pub catalog_key: String,
    /// The entry's version; the newest when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_version: Option<i64>,
    /// The new environment's name; the catalog entry's name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The new environment's description; the catalog entry's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `POST /execution-environments/:id/support`: `null` clears the posture.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SetSupportStatus {
    /// `approved`, `blocked`, or null to clear the posture.
    pub support_status: Option<SupportStatus>,
}

/// `GET /execution-environments` filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EnvironmentFilter {
    /// Only environments with this verdict.
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
    /// The verdict.
    pub compatibility_status: CompatibilityStatus,
    /// Why the environment is incompatible (empty when compatible).
    pub compatibility_errors: Vec<String>,
    /// The verification contract the verdict was produced under
    /// ([`VERIFICATION_CONTRACT_VERSION`]).
    pub verification_contract_version: String,
    /// What the probe found: distro, package manager, runtimes and versions,
    /// baseline commands, domain reachability.
    pub verified_metadata: Value,
    /// The commands and tools the probe found in the image.
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
    /// The entry's key, named by `catalogKey` when seeding.
    pub key: String,
    /// The entry's version (bundled entries are version 1).
    pub version: i64,
    /// The name an environment seeded from the entry gets by default.
    pub name: String,
    /// What the entry is for.
    #[serde(default)]
    pub description: String,
    /// The container image.
    pub image: String,
    /// CPUs for a run, a positive decimal.
    pub cpu: String,
    /// Memory for a run, bytes with an optional unit.
    pub memory: String,
    /// When the runtime pulls the image (default `if-not-present`).
    #[serde(default)]
    pub pull_policy: PullPolicy,
    /// Shell commands that prepare the container; verification runs them before
    /// the probe.
    #[serde(default)]
    pub bootstrap_commands: Vec<String>,
    /// Domains the bootstrap needs.
    #[serde(default)]
    pub bootstrap_required_domains: Vec<String>,
    /// Commands the image is declared to provide (checked by verify).
    #[serde(default)]
    pub tools: Vec<String>,
}
