//! Help as a person reads it: every command's `--help`, walked through the
//! real binary from `orch --help` down, describes every option and argument
//! it lists, and the global options appear once, in `orch --help`, instead of
//! in every subcommand's help.

mod common;

use common::orch_with;

/// The subcommands a help text lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.trim_end() == "Commands:" {
            inside = true;
            continue;
        }
        if inside {
            if !line.starts_with("  ") {
                break;
            }
            let name = line.split_whitespace().next().unwrap_or_default();
            if name != "help"
                && !name.is_empty()
                && line.starts_with("  ")
                && !line.starts_with("   ")
            {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// The options and arguments of a help text that have no description: an
/// entry line (indented less than a description, starting with `-`, `<` or
/// `[`) with no text after it and no indented description line below.
fn undescribed(help: &str) -> Vec<String> {
    let lines: Vec<&str> = help.lines().collect();
    let mut missing = Vec::new();
    let mut section = "";
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with(' ') && line.trim_end().ends_with(':') {
            section = line.trim_end();
            continue;
        }
        if section == "Commands:" || section.is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let entry = line.trim_start();
        let is_entry = (1..10).contains(&indent)
            && (entry.starts_with('-') || entry.starts_with('<') || entry.starts_with('['));
        if !is_entry {
            continue;
        }
        // The description follows two spaces on the same line, or (when the
        // entry is too wide) on the next line, indented further.
        let same_line = entry
            .split_once("  ")
            .is_some_and(|(_, rest)| !rest.trim().is_empty());
        let next_line = lines.get(i + 1).is_some_and(|next| {
            next.len() - next.trim_start().len() >= 10 && !next.trim().is_empty()
        });
        let described = same_line || next_line;
        if !described && !entry.starts_with("-h, --help") && !entry.starts_with("-V, --version") {
            missing.push(entry.to_owned());
        }
    }
    missing
}

async fn help(path: &[String]) -> String {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let out = orch_with(&args, &[]).await;
    assert!(
        out.status.success(),
        "orch {} --help failed",
        path.join(" ")
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn every_option_of_every_command_has_a_description() {
    let mut pending: Vec<Vec<String>> = vec![Vec::new()];
    let mut seen = 0;
    let mut failures = Vec::new();
    while let Some(path) = pending.pop() {
        let text = help(&path).await;
        seen += 1;
        for entry in undescribed(&text) {
            failures.push(format!("orch {}: {entry}", path.join(" ")));
        }
        for name in subcommands(&text) {
            let mut sub = path.clone();
            sub.push(name);
            pending.push(sub);
        }
    }
    assert!(seen > 100, "walked only {seen} commands");
    assert!(
        failures.is_empty(),
        "options without a description:\n{}",
        failures.join("\n")
    );
}

#[tokio::test]
async fn global_options_are_listed_once_in_the_top_level_help() {
    let top = help(&[]).await;
    assert!(top.contains("Global options:"), "{top}");
    assert!(top.contains("--api-key"), "{top}");
    for path in [
        &["workflows", "get"][..],
        &["tasks", "list"],
        &["worker", "run"],
    ] {
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        let text = help(&path).await;
        assert!(
            !text.contains("--api-key <API_KEY>"),
            "orch {path:?} --help repeats the globals:\n{text}"
        );
        assert!(text.contains("see `orch --help`"), "{text}");
    }
    // They still work after a subcommand.
    let out = orch_with(
        &[
            "workflows",
            "list",
            "--url",
            "http://127.0.0.1:9",
            "--api-key",
            "k",
        ],
        &[],
    )
    .await;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("cannot reach orch at http://127.0.0.1:9"),
        "{said}"
    );
}

#[tokio::test]
async fn examples_put_a_trailing_command_after_double_dash() {
    let text = help(&["worker".into(), "run".into()]).await;
    assert!(
        text.contains("orch worker run --name laptop --tag role:dev -- examples/worker_task.sh"),
        "{text}"
    );
}
