//! Wire enums as `enum` lists.
//!
//! When an enum's variants carry doc comments, schemars describes it as a
//! `oneOf` of one `const` schema per variant, so that each value keeps its
//! description. Client generators and readers expect the plain
//! `{"type": "string", "enum": [...]}` form the document always used for
//! enums, so this transform folds such a `oneOf` back into an `enum` list
//! and moves the variants' descriptions into the schema's own description
//! (one "`value`: what it means" line each), where they stay readable.

use schemars::Schema;
use schemars::transform::{Transform, transform_subschemas};
use serde_json::{Map, Value};

/// Folds `oneOf` lists of `const` schemas into `enum` lists, everywhere in a
/// schema.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ConstsAsEnum;

impl Transform for ConstsAsEnum {
    fn transform(&mut self, schema: &mut Schema) {
        transform_subschemas(self, schema);
        if let Some(object) = schema.as_object_mut() {
            fold(object);
        }
    }
}

/// A variant schema this transform folds: a `const` with at most a type and
/// a description beside it.
fn variant(option: &Value) -> Option<(&Value, Option<&Value>, Option<&str>)> {
    let fields = option.as_object()?;
    let value = fields.get("const")?;
    if fields
        .keys()
        .any(|k| !matches!(k.as_str(), "const" | "type" | "description"))
    {
        return None;
    }
    let about = fields.get("description").and_then(Value::as_str);
    Some((value, fields.get("type"), about))
}

fn fold(object: &mut Map<String, Value>) {
    let Some(Value::Array(options)) = object.get("oneOf") else {
        return;
    };
    let Some(variants) = options.iter().map(variant).collect::<Option<Vec<_>>>() else {
        return;
    };
    if variants.is_empty() {
        return;
    }
    let mut types: Vec<Value> = Vec::new();
    for (value, kind, _) in &variants {
        let kind = kind.cloned().unwrap_or_else(|| match value {
            Value::Null => "null".into(),
            Value::Bool(_) => "boolean".into(),
            Value::Number(_) => "number".into(),
            Value::String(_) => "string".into(),
            Value::Array(_) => "array".into(),
            Value::Object(_) => "object".into(),
        });
        if !types.contains(&kind) {
            types.push(kind);
        }
    }
    let values: Vec<Value> = variants.iter().map(|(v, _, _)| (*v).clone()).collect();
    let lines: Vec<String> = variants
        .iter()
        .filter_map(|(value, _, about)| {
            let about = (*about)?;
            let shown = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            Some(format!("- `{shown}`: {about}"))
        })
        .collect();
    object.remove("oneOf");
    object.insert(
        "type".into(),
        if types.len() == 1 {
            types.remove(0)
        } else {
            Value::Array(types)
        },
    );
    object.insert("enum".into(), Value::Array(values));
    if !lines.is_empty() {
        let lead = object
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let text = match lead {
            Some(lead) => format!("{lead}\n\n{}", lines.join("\n")),
            None => lines.join("\n"),
        };
        object.insert("description".into(), Value::String(text));
    }
}
