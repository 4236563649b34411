//! Rules of the request fields: names, images, resource limits, bootstrap
//! commands and domains. Field names in errors are the request's (camelCase).

use crate::error::{Error, Result};

pub(crate) const DEFAULT_CPU: &str = "1";
pub(crate) const DEFAULT_MEMORY: &str = "1g";

pub(crate) fn name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(Error::invalid_field("name", "must be 1 to 200 characters"));
    }
    Ok(name.to_owned())
}

/// An image reference: no whitespace, at most 500 characters, not starting
/// with `-` (it is passed to the runtime's command line).
pub(crate) fn image(image: &str) -> Result<String> {
    let image = image.trim();
    if image.is_empty()
        || image.len() > 500
        || image.starts_with('-')
        || image.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(Error::invalid_field(
            "image",
            "must be an image reference such as debian:bookworm-slim (no spaces)",
        ));
    }
    Ok(image.to_owned())
}

/// CPUs as a positive decimal up to 256 (`1`, `0.5`).
pub(crate) fn cpu(cpu: &str) -> Result<String> {
    let cpu = cpu.trim();
    let ok = !cpu.is_empty()
        && cpu.chars().all(|c| c.is_ascii_digit() || c == '.')
        && cpu.parse::<f64>().is_ok_and(|v| v > 0.0 && v <= 256.0);
    if !ok {
        return Err(Error::invalid_field(
            "cpu",
            "must be a positive number of CPUs up to 256, such as 1 or 0.5",
        ));
    }
    Ok(cpu.to_owned())
}

/// Splits `512m` / `2Gi` into the number and a lowercase docker unit.
fn memory_parts(memory: &str) -> Option<(u64, &'static str)> {
    let digits = memory.chars().take_while(char::is_ascii_digit).count();
    let value: u64 = memory[..digits].parse().ok()?;
    let unit = match &memory[digits..] {
        "" | "b" | "B" => "b",
        "k" | "K" | "Ki" | "kb" | "KB" => "k",
        "m" | "M" | "Mi" | "mb" | "MB" => "m",
        "g" | "G" | "Gi" | "gb" | "GB" => "g",
        _ => return None,
    };
    Some((value, unit))
}

/// Memory as bytes with an optional unit (`512m`, `2g`, `2Gi`), at least
/// 6 MiB as the runtimes require.
pub(crate) fn memory(memory: &str) -> Result<String> {
    let memory = memory.trim();
    let bytes = memory_parts(memory).map(|(value, unit)| {
        let scale: u64 = match unit {
            "k" => 1 << 10,
            "m" => 1 << 20,
            "g" => 1 << 30,
            _ => 1,
        };
        value.saturating_mul(scale)
    });
    if bytes.is_none_or(|b| b < 6 << 20) {
        return Err(Error::invalid_field(
            "memory",
            "must be at least 6 MiB, written as a number with an optional unit (512m, 2g, 2Gi)",
        ));
    }
    Ok(memory.to_owned())
}

/// The `--memory` value the docker and podman CLIs take.
pub(crate) fn docker_memory(memory: &str) -> String {
    match memory_parts(memory) {
        Some((value, unit)) => format!("{value}{unit}"),
        None => memory.to_owned(),
    }
}

/// At most 50 commands of at most 4,000 characters, none empty.
pub(crate) fn bootstrap_commands(commands: &[String]) -> Result<Vec<String>> {
    if commands.len() > 50
        || commands
            .iter()
            .any(|c| c.trim().is_empty() || c.len() > 4000)
    {
        return Err(Error::invalid_field(
            "bootstrapCommands",
            "must be at most 50 non-empty commands of at most 4000 characters",
        ));
    }
    Ok(commands.to_vec())
}

/// Host names (`deb.debian.org`, `registry.npmjs.org:443`) or http(s) URLs,
/// without whitespace or shell characters, at most 50.
pub(crate) fn domains(domains: &[String]) -> Result<Vec<String>> {
    let ok = |d: &String| {
        !d.is_empty()
            && d.len() <= 500
            && d.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._:/%?&=[]@~+,".contains(c))
            && (!d.contains("://") || d.starts_with("http://") || d.starts_with("https://"))
    };
    if domains.len() > 50 || !domains.iter().all(ok) {
        return Err(Error::invalid_field(
            "bootstrapRequiredDomains",
            "must be at most 50 host names or http(s) URLs",
        ));
    }
    Ok(domains.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_accept_docker_and_kubernetes_forms() {
        assert!(cpu("0.5").is_ok() && cpu("2").is_ok());
        assert!(cpu("0").is_err() && cpu("-1").is_err() && cpu("lots").is_err());
        assert_eq!(docker_memory("2Gi"), "2g");
        assert_eq!(docker_memory("512m"), "512m");
        assert!(memory("1k").is_err() && memory("2 g").is_err() && memory("big").is_err());
        assert!(domains(&["a.example; rm -rf /".into()]).is_err());
        assert!(domains(&["http://127.0.0.1:8080/healthz".into()]).is_ok());
    }
}
