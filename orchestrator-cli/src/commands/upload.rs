//! The upload limits, checked before sending (decisions §8): a file that is
//! too large is named at once instead of after sending megabytes, and in
//! the words a person uses for files.

use crate::output;
use orchestrator_client::api::workspaces::MAX_FILE_BYTES;
use std::path::Path;

/// Files one request carries at most.
pub const MAX_FILES: usize = 10;
/// One request's body at most; files travel as base64 (4 bytes per 3).
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;
/// The limits, as every message states them.
const LIMITS: &str = "files may be up to 10 MiB each and 16 MiB per request once encoded \
                      (about 12 MiB of files), at most 10 files";

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Checks the files of one request, by path and size, before it is sent:
/// a usage error (exit 2) naming the first file over a limit.
pub fn check(files: &[(&Path, usize)]) -> anyhow::Result<()> {
    if files.len() > MAX_FILES {
        return Err(output::usage(format!(
            "{} files in one request; {LIMITS}",
            files.len()
        )));
    }
    let mut encoded = 0;
    for (path, size) in files {
        if *size > MAX_FILE_BYTES {
            return Err(output::usage(format!(
                "{} is {:.1} MiB; {LIMITS}",
                path.display(),
                mib(*size)
            )));
        }
        encoded += size.div_ceil(3) * 4;
    }
    // Names, types and the JSON around them need a little room too.
    if encoded + 64 * 1024 > MAX_REQUEST_BYTES {
        return Err(output::usage(format!(
            "these files are {:.1} MiB together ({:.1} MiB encoded); {LIMITS}: send them in several requests",
            mib(files.iter().map(|(_, s)| s).sum()),
            mib(encoded)
        )));
    }
    Ok(())
}
