//! How deep stored JSON may nest.
//!
//! Every JSON document a client stores (task input and output, progress,
//! metadata, workspace memory, log payloads) is read back later by a JSON
//! parser with a recursion limit: `serde_json` stops at 128 levels, and the
//! record around a value (the envelope, a list, the row) adds levels of its
//! own. A body nested deeper than [`MAX_JSON_DEPTH`] is therefore refused
//! when it arrives (422 naming the field), so that everything stored reads
//! back, in the server and in every SDK.

/// Levels of objects and arrays a request body (and so any value stored from
/// it) may nest: the body object itself is the first.
pub const MAX_JSON_DEPTH: usize = 64;

/// One open container while scanning.
#[derive(Clone, Copy)]
enum Frame {
    /// An object and the byte range of its current key.
    Object(Option<(usize, usize)>),
    /// An array and the index of its current item.
    Array(usize),
}

/// Where JSON text `bytes` first nests deeper than `limit` levels: the field
/// path down to that point, cut to its first three parts (`entries[0].payload`,
/// `metadata.a.b`), or `None` when it stays within. One pass over the bytes
/// without building a tree (a body of any depth is scanned without
/// recursion); text that is not JSON is left for the parser to refuse.
pub fn too_deep(bytes: &[u8], limit: usize) -> Option<String> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut last_string = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i = start;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                last_string = Some((start, i.min(bytes.len())));
            }
            b':' => {
                if let Some(Frame::Object(key)) = stack.last_mut() {
                    *key = last_string;
                }
            }
            b',' => {
                if let Some(Frame::Array(index)) = stack.last_mut() {
                    *index += 1;
                }
            }
            open @ (b'{' | b'[') => {
                if stack.len() >= limit {
                    return Some(path(bytes, &stack));
                }
                stack.push(if open == b'{' {
                    Frame::Object(None)
                } else {
                    Frame::Array(0)
                });
            }
            b'}' | b']' => {
                stack.pop();
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn path(bytes: &[u8], stack: &[Frame]) -> String {
    let mut out = String::new();
    for frame in stack.iter().take(3) {
        match *frame {
            Frame::Object(Some((start, end))) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&String::from_utf8_lossy(&bytes[start..end]));
            }
            Frame::Object(None) => {}
            Frame::Array(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn counts_levels_and_names_the_field() {
        let body = format!(r#"{{"entries":[{{"payload":{}}}]}}"#, nested(62));
        assert_eq!(
            too_deep(body.as_bytes(), 64),
            Some("entries[0].payload".into())
        );
        let body = format!(r#"{{"entries":[{{"payload":{}}}]}}"#, nested(61));
        assert_eq!(too_deep(body.as_bytes(), 64), None);
        let deep = format!(r#"{{"a":"x\"{{[[","metadata":{}}}"#, nested(200_000));
        assert_eq!(too_deep(deep.as_bytes(), 64), Some("metadata[0][0]".into()));
    }

    #[test]
    fn later_items_are_named_by_index() {
        let body = format!(r#"{{"items":[1,[2],{}]}}"#, nested(70));
        assert_eq!(too_deep(body.as_bytes(), 64), Some("items[2][0]".into()));
    }
}
