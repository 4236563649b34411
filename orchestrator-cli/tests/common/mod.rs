//! What the binary's tests share: running `orch` off the async runtime with
//! a controlled environment, and reading its JSON output.
#![allow(dead_code)] // each test binary uses its own subset

pub mod pg;
pub mod served;

use serde_json::Value;
use std::process::{Command, Output};

/// The `orch` binary under test.
pub const ORCH: &str = env!("CARGO_BIN_EXE_orch");

/// Runs `orch args` on a blocking thread. The caller's `ORCH_URL`,
/// `ORCH_API_KEY` and profile file never leak in: only `env` sets them (the
/// profile file defaults to one that does not exist).
pub async fn orch_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    tokio::task::spawn_blocking(move || {
        Command::new(ORCH)
            .args(&args)
            .env_remove("ORCH_URL")
            .env_remove("ORCH_API_KEY")
            .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
            .envs(env)
            .output()
            .expect("run orch")
    })
    .await
    .unwrap()
}

/// The JSON `orch` printed, after checking that it succeeded.
pub fn json(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "orch failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// `orch args` as `server`'s admin, with the profile file in `dir`.
pub async fn orch_admin(
    server: &orchestrator_tests::TestServer,
    dir: &std::path::Path,
    args: &[&str],
) -> Output {
    let config = dir.join("config.json").display().to_string();
    let env = [
        ("ORCH_URL", server.url.as_str()),
        ("ORCH_API_KEY", server.admin_key.as_str()),
        ("ORCH_CONFIG", config.as_str()),
    ];
    orch_with(args, &env).await
}

/// What `orch` printed, after checking that it succeeded.
pub fn text(output: &Output) -> String {
    assert!(
        output.status.success(),
        "orch failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Waits (up to 20 s) until `check` answers true.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Like [`orch_with`], with `stdin` as the standard input.
pub async fn orch_stdin(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let stdin = stdin.to_vec();
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new(ORCH)
            .args(&args)
            .env_remove("ORCH_URL")
            .env_remove("ORCH_API_KEY")
            .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run orch");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(&stdin)
            .expect("write stdin");
        child.wait_with_output().expect("orch output")
    })
    .await
    .unwrap()
}
