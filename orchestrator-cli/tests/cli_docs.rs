//! `docs/cli.md` is generated from the clap definitions (`orch docs cli`):
//! this fails when the committed page differs from what the binary prints,
//! so a new command, option or help text cannot leave the page stale.
//! Regenerate with `ORCH_UPDATE_CLI_DOCS=1 cargo nextest run -p
//! orchestrator-cli --test cli_docs`.

use std::path::PathBuf;

mod common;

use common::orch_with;

#[tokio::test]
async fn the_committed_cli_page_matches_the_command_line() {
    let output = orch_with(&["docs", "cli"], &[]).await;
    assert!(
        output.status.success(),
        "orch docs cli failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let generated = String::from_utf8(output.stdout).unwrap();
    assert!(
        generated.contains("## orch workflows launch")
            || generated.contains("### orch workflows launch")
    );
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/cli.md");
    if std::env::var("ORCH_UPDATE_CLI_DOCS").as_deref() == Ok("1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/cli.md differs from `orch docs cli`: the command line changed. Regenerate the page \
         with `ORCH_UPDATE_CLI_DOCS=1 cargo nextest run -p orchestrator-cli --test cli_docs` \
         and commit it with the change."
    );
}
