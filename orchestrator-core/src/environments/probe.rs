//! Verification: one probe script (`probe.sh`), run either in a container of
//! the environment's image through the `docker` or `podman` CLI (pulled per
//! the pull policy, with the cpu/memory limits, a timeout, removed after) or,
//! with the host probe (`ORCH_PROBE=host`), in a local shell. The script's
//! `key=value` lines become the verdict, the verified metadata, the tool
//! capabilities and the agent hint.

use crate::api::environments::{CompatibilityStatus, VERIFICATION_CONTRACT_VERSION, Verification};
use crate::config::CoreConfig;
use crate::environments::fields::docker_memory;
use crate::environments::rows::EnvironmentRow;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::Command;

/// The probe script, the same in a container and on the host.
pub(crate) const SCRIPT: &str = include_str!("probe.sh");

/// The probe output kept on the answer.
const MAX_OUTPUT: usize = 64 * 1024;

/// Commands every environment must have; `curl` or `wget` is checked apart.
const BASELINE: &[&str] = &["sh", "git", "tar"];

/// Where the probe ran.
enum Place {
    Host,
    Runtime(PathBuf),
}

/// What one run of the script gave.
struct Run {
    stdout: String,
    stderr: String,
    /// A failure to start or finish the probe (the verdict is then
    /// `incompatible` with this message).
    failure: Option<String>,
}

/// Runs the probe for `row` and answers the verdict.
pub(crate) async fn verify(config: &CoreConfig, row: &EnvironmentRow) -> Verification {
    let declared = declared_tools(&row.tool_capabilities.0);
    let place = if config.host_probe {
        Some(Place::Host)
    } else {
        config
            .container_runtimes
            .iter()
            .find_map(|name| find_on_path(name))
            .map(Place::Runtime)
    };
    let Some(place) = place else {
        let message = format!(
            "no container runtime: none of {} is on the server's PATH; install docker or podman, \
             or set ORCH_PROBE=host to probe the server's own shell",
            config.container_runtimes.join(", ")
        );
        let verified_at = crate::api::Timestamp::from(config.clock.now());
        return verdict_without_run(row, &declared, message, verified_at);
    };
    let run = match &place {
        Place::Host => run_on_host(config.probe_timeout, row, &declared).await,
        Place::Runtime(runtime) => {
            run_in_container(config.probe_timeout, runtime, row, &declared).await
        }
    };
    let facts = Facts::parse(&run.stdout);
    let mut errors = Vec::new();
    if let Some(failure) = &run.failure {
        errors.push(failure.clone());
    } else if !facts.finished {
        errors.push(format!(
            "the probe did not finish: {}",
            last_line(&run.stderr).unwrap_or("no output")
        ));
    } else {
        errors.extend(facts.errors(&declared, &row.bootstrap_required_domains.0));
    }
    let mut metadata = facts.metadata();
    match &place {
        Place::Host => {
            metadata.insert("probe".into(), json!("host"));
            metadata.insert(
                "bootstrap".into(),
                json!("skipped: the host probe never runs bootstrap commands on the server"),
            );
        }
        Place::Runtime(runtime) => {
            let name = runtime
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            metadata.insert("probe".into(), json!("container"));
            metadata.insert("runtime".into(), json!(name));
            metadata.insert("image".into(), json!(row.image));
            metadata.insert("pull_policy".into(), json!(row.pull_policy));
            metadata.insert("bootstrap".into(), json!(facts.bootstrap_results()));
        }
    }
    let verified_at = crate::api::Timestamp::from(config.clock.now());
    metadata.insert("verified_at".into(), json!(verified_at));
    let mut probe_output = run.stdout;
    if !run.stderr.is_empty() {
        probe_output.push_str(&run.stderr);
    }
    if probe_output.len() > MAX_OUTPUT {
        let mut end = MAX_OUTPUT;
        while !probe_output.is_char_boundary(end) {
            end -= 1;
        }
        probe_output.truncate(end);
    }
    Verification {
        compatibility_status: if errors.is_empty() {
            CompatibilityStatus::Compatible
        } else {
            CompatibilityStatus::Incompatible
        },
        compatibility_errors: errors,
        verification_contract_version: VERIFICATION_CONTRACT_VERSION.into(),
        verified_metadata: Value::Object(metadata),
        tool_capabilities: facts.capabilities(&declared),
        probe_output,
    }
}

fn verdict_without_run(
    row: &EnvironmentRow,
    declared: &[String],
    message: String,
    verified_at: crate::api::Timestamp,
) -> Verification {
    Verification {
        compatibility_status: CompatibilityStatus::Incompatible,
        compatibility_errors: vec![message],
        verification_contract_version: VERIFICATION_CONTRACT_VERSION.into(),
        verified_metadata: json!({
            "probe": "none",
            "image": row.image,
            "verified_at": verified_at,
        }),
        tool_capabilities: json!({ "declared": declared }),
        probe_output: String::new(),
    }
}

/// The tools the catalog declared for the image (kept under `declared`).
pub(crate) fn declared_tools(capabilities: &Value) -> Vec<String> {
    capabilities
        .get("declared")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `name` as an executable file: itself when it is a path, else the first
/// match on `PATH`.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let is_file = |p: &PathBuf| p.is_file();
    if name.contains('/') {
        return Some(PathBuf::from(name)).filter(is_file);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(is_file)
}

fn probe_env(row: &EnvironmentRow, declared: &[String]) -> [(&'static str, String); 2] {
    [
        ("ORCH_PROBE_TOOLS", declared.join(" ")),
        (
            "ORCH_PROBE_DOMAINS",
            row.bootstrap_required_domains.0.join(" "),
        ),
    ]
}

async fn run_on_host(timeout: Duration, row: &EnvironmentRow, declared: &[String]) -> Run {
    let mut command = Command::new("sh");
    command.arg("-c").arg(SCRIPT).envs(probe_env(row, declared));
    run(command, timeout, None).await
}

/// The shell text run in the container: each bootstrap command (its exit
/// status reported as `bootstrap.N=`), then the probe.
fn container_script(row: &EnvironmentRow) -> String {
    let mut script = String::new();
    for (i, command) in row.bootstrap_commands.0.iter().enumerate() {
        script.push_str(&format!("( {command}\n) >&2; echo \"bootstrap.{i}=$?\"\n"));
    }
    script.push_str(SCRIPT);
    script
}

async fn run_in_container(
    timeout: Duration,
    runtime: &PathBuf,
    row: &EnvironmentRow,
    declared: &[String],
) -> Run {
    let name = format!("orch-probe-{}", uuid::Uuid::new_v4());
    let pull = match row.pull_policy() {
        crate::api::environments::PullPolicy::IfNotPresent => "missing",
        crate::api::environments::PullPolicy::Always => "always",
        crate::api::environments::PullPolicy::Never => "never",
    };
    let mut command = Command::new(runtime);
    command
        .args(["run", "--rm", "--name", &name, "--pull", pull])
        .args(["--cpus", &row.cpu, "--memory", &docker_memory(&row.memory)]);
    for (key, value) in probe_env(row, declared) {
        command.arg("-e").arg(format!("{key}={value}"));
    }
    command
        .args(["--entrypoint", "sh", &row.image, "-c"])
        .arg(container_script(row));
    run(command, timeout, Some((runtime, name))).await
}

/// Runs `command` to its end or the timeout; on timeout kills it and, for a
/// container, removes the container by name.
async fn run(
    mut command: Command,
    timeout: Duration,
    container: Option<(&PathBuf, String)>,
) -> Run {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Run {
                stdout: String::new(),
                stderr: String::new(),
                failure: Some(format!("the probe could not start: {e}")),
            };
        }
    };
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(output)) => {
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            let failure = match (&container, output.status.code()) {
                (Some(_), Some(code)) if code >= 125 && !stdout.contains("orch-probe=1") => {
                    Some(format!(
                        "the container did not start (exit {code}): {}",
                        last_line(&stderr).unwrap_or("no output")
                    ))
                }
                _ => None,
            };
            Run {
                stdout,
                stderr,
                failure,
            }
        }
        Ok(Err(e)) => Run {
            stdout: String::new(),
            stderr: String::new(),
            failure: Some(format!("the probe failed: {e}")),
        },
        Err(_) => {
            if let Some((runtime, name)) = container {
                let _ = Command::new(runtime)
                    .args(["rm", "-f", &name])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .await;
            }
            Run {
                stdout: String::new(),
                stderr: String::new(),
                failure: Some(format!("the probe timed out after {} s", timeout.as_secs())),
            }
        }
    }
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().rev().map(str::trim).find(|l| !l.is_empty())
}

/// The facts the script printed.
#[derive(Default)]
struct Facts {
    finished: bool,
    values: BTreeMap<String, String>,
    lines: Vec<String>,
}

impl Facts {
    fn parse(stdout: &str) -> Self {
        let mut facts = Facts::default();
        for line in stdout.lines() {
            facts.lines.push(line.to_owned());
            if line == "orch-probe-end=1" {
                facts.finished = true;
            }
            if let Some((key, value)) = line.split_once('=') {
                facts.values.insert(key.to_owned(), value.to_owned());
            }
        }
        facts
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.values
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    fn prefixed(&self, prefix: &str) -> BTreeMap<String, String> {
        self.values
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k.to_owned(), v.clone())))
            .collect()
    }

    fn has(&self, command: &str) -> bool {
        self.values.contains_key(&format!("command.{command}"))
    }

    fn domain_reachable(&self, domain: &str) -> bool {
        let wanted = format!("domain.{domain}=ok");
        self.lines.contains(&wanted)
    }

    fn errors(&self, declared: &[String], domains: &[String]) -> Vec<String> {
        let mut errors = Vec::new();
        for (i, status) in self.prefixed("bootstrap.") {
            if status != "0" {
                errors.push(format!("bootstrap command {i} exited with status {status}"));
            }
        }
        for command in BASELINE {
            if !self.has(command) {
                errors.push(format!("missing baseline command: {command}"));
            }
        }
        if !self.has("curl") && !self.has("wget") {
            errors.push("missing baseline command: curl or wget".into());
        }
        for tool in declared {
            if !self.has(tool) {
                errors.push(format!("declared tool not found: {tool}"));
            }
        }
        for domain in domains {
            if !self.domain_reachable(domain) {
                errors.push(format!("required domain not reachable: {domain}"));
            }
        }
        errors
    }

    fn bootstrap_results(&self) -> BTreeMap<String, String> {
        self.prefixed("bootstrap.")
    }

    fn metadata(&self) -> Map<String, Value> {
        let mut metadata = Map::new();
        metadata.insert("shell".into(), json!(self.get("shell")));
        metadata.insert("arch".into(), json!(self.get("arch")));
        metadata.insert("kernel".into(), json!(self.get("kernel")));
        metadata.insert(
            "distro".into(),
            json!({
                "id": self.get("distro.id"),
                "version": self.get("distro.version"),
                "name": self.get("distro.name"),
            }),
        );
        let domains: Map<String, Value> = self
            .lines
            .iter()
            .filter_map(|l| l.strip_prefix("domain."))
            .filter_map(|l| l.rsplit_once('='))
            .map(|(d, r)| (d.to_owned(), json!(r == "ok")))
            .collect();
        metadata.insert("domains_reachable".into(), Value::Object(domains));
        metadata
    }

    fn capabilities(&self, declared: &[String]) -> Value {
        json!({
            "declared": declared,
            "commands": self.prefixed("command.").into_keys().collect::<Vec<_>>(),
            "package_manager": self.get("package_manager"),
            "runtimes": self.prefixed("runtime."),
        })
    }
}

/// The one-line routing hint: what the verified facts say the image offers.
pub(crate) fn agent_hint(row: &EnvironmentRow) -> String {
    let verified = &row.verified_metadata.0;
    let capabilities = &row.tool_capabilities.0;
    let mut parts = vec![format!("{} ({})", row.name, row.image)];
    match row.compatibility_status.as_str() {
        "unknown" => {
            parts.push("not verified yet".into());
            let declared = declared_tools(capabilities);
            if !declared.is_empty() {
                parts.push(format!("declared tools: {}", declared.join(", ")));
            }
        }
        status => {
            if let Some(distro) = verified.pointer("/distro/name").and_then(Value::as_str) {
                parts.push(distro.to_owned());
            }
            if let Some(runtimes) = capabilities.get("runtimes").and_then(Value::as_object)
                && !runtimes.is_empty()
            {
                let list: Vec<String> = runtimes
                    .values()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                parts.push(format!("runtimes: {}", list.join(", ")));
            }
            if let Some(manager) = capabilities.get("package_manager").and_then(Value::as_str) {
                parts.push(format!("packages: {manager}"));
            }
            if let Some(commands) = capabilities.get("commands").and_then(Value::as_array) {
                let list: Vec<&str> = commands.iter().filter_map(Value::as_str).collect();
                parts.push(format!("commands: {}", list.join(" ")));
            }
            parts.push(status.to_owned());
        }
    }
    parts.push(format!("cpu {}, memory {}", row.cpu, row.memory));
    parts.join("; ")
}
