//! Unknown fields in input objects, as `kubectl --validate=warn` reports them: a field the kind's
//! schema does not have (`spec.replica` for `spec.replicas`) is named with its file and line.
//!
//! The loader judges each object it reads ([`has_unknown_fields`], on the value it parsed), and
//! only the documents holding an object with an unknown field are read again here, for the lines
//! (`load::load_sources_judged`): a clean dump is parsed once. Read here, one object at a time is
//! held (with the line of each key), judged and dropped, documents and kubectl-laid-out `List`
//! items apart on every core, so a second copy of a large dump is never held. Kinds with no known schema are not
//! judged; a document that does not parse is left to the loader, which reports it.

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::load::{Source, list_items, split_documents};

mod core_kinds;
pub mod schema;

/// A field no schema of its object's kind has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownField {
    /// kubectl's form: `spec.template.spec.containers[0].imagePullPolic`.
    pub path: String,
    /// The input it is in (a path or `<stdin>`).
    pub file: String,
    /// Its 1-based line in that input.
    pub line: usize,
}

/// Every unknown field of the objects in `source`, in input order. Documents are judged apart,
/// on every core (the loader's split, `load::split_documents`), and so are the items of a `List`
/// laid out as kubectl writes it (`load::list_items`); a document that does not parse yields
/// nothing (the loader reports it) and the others are still judged.
pub fn unknown_fields(source: &Source) -> Vec<UnknownField> {
    unknown_fields_where(source, |_| true)
}

/// [`unknown_fields`] of the documents numbered (from 1) `n` for which `judged(n)`.
pub(crate) fn unknown_fields_where(
    source: &Source,
    judged: impl Fn(usize) -> bool + Sync,
) -> Vec<UnknownField> {
    let documents: Vec<(usize, usize, &str)> = split_documents(&source.text)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| judged(i + 1))
        .map(|(i, (line, text))| (i + 1, line, text))
        .collect();
    crate::parallel::map(&documents, |&(_, first_line, text)| {
        document_findings(text, first_line - 1)
    })
    .into_iter()
    .flatten()
    .map(|(path, line)| UnknownField {
        path,
        file: source.name.clone(),
        line,
    })
    .collect()
}

/// Parser options for `len` bytes of text: every budget that counts what the text holds grows
/// with it, as the loader's do.
fn options(len: usize) -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_nodes: len.max(250_000),
            max_events: len.saturating_mul(2).max(1_000_000),
            max_total_scalar_bytes: len.max(64 << 20),
        },
    }
}

/// One document's unknown fields, `before` its first line (their lines count from the file's
/// start).
fn document_findings(text: &str, before: usize) -> Vec<(String, usize)> {
    let shift = |found: Vec<(String, usize)>, by: usize| {
        found
            .into_iter()
            .map(|(path, line)| (path, line + by))
            .collect::<Vec<_>>()
    };
    if let Some(found) = list_findings(text) {
        return shift(found, before);
    }
    serde_saphyr::from_str_with_options::<DocFindings>(text, options(text.len()))
        .map(|d| shift(d.0, before))
        .unwrap_or_default()
}

/// The findings of a `List` laid out as kubectl writes it, its items judged on every core (lines
/// within the document); None for another layout or when the document less its items, or an
/// item alone (an alias to another item), does not parse: it is then read whole.
fn list_findings(text: &str) -> Option<Vec<(String, usize)>> {
    let (header, items) = list_items(text)?;
    serde_saphyr::from_str_with_options::<DocFindings>(&header, options(header.len())).ok()?;
    // Each item's first line in the document.
    let mut lines = Vec::with_capacity(items.len());
    let (mut line, mut counted) = (1, 0);
    for item in &items {
        let at = item.as_ptr() as usize - text.as_ptr() as usize;
        line += text[counted..at].matches('\n').count();
        counted = at;
        lines.push(line);
    }
    let indexed: Vec<(usize, &str)> = lines.into_iter().zip(items).collect();
    let found = crate::parallel::map(&indexed, |&(first, item)| {
        let mut found = Vec::new();
        serde_saphyr::with_deserializer_from_str_with_options(item, options(item.len()), |de| {
            Items(&mut found).deserialize(de)
        })
        .ok()?;
        Some(
            found
                .into_iter()
                .map(|(path, l)| (path, l + first - 1))
                .collect::<Vec<_>>(),
        )
    });
    let mut out = Vec::new();
    for f in found {
        out.extend(f?);
    }
    Some(out)
}

/// A YAML node with the line of each mapping key: one object's worth, judged and dropped.
#[derive(Debug)]
enum Node {
    Map(Vec<(String, usize, Node)>),
    Seq(Vec<Node>),
    Scalar(Value),
}

impl Node {
    /// The plain JSON value (for the k8s-openapi types' own check).
    fn to_value(&self) -> Value {
        match self {
            Node::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, _, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
            Node::Seq(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Scalar(v) => v.clone(),
        }
    }

    /// The line of the key at `path` (the deepest key found on the way).
    fn line_of(&self, path: &[Seg]) -> usize {
        let mut node = self;
        let mut line = 0;
        for seg in path {
            let next = match (seg, node) {
                (Seg::Key(k), Node::Map(entries)) => entries.iter().find(|e| &e.0 == k).map(|e| {
                    line = e.1;
                    &e.2
                }),
                (Seg::Index(i), Node::Seq(items)) => items.get(*i),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        line
    }
}

/// One step of a field path.
#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

/// kubectl's spelling of a path: keys joined by dots, list indexes in brackets.
fn path_text(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The unknown fields of one object, with their lines.
fn judge(object: Node) -> Vec<(String, usize)> {
    let mut value = object.to_value();
    let mut found: Vec<(String, usize)> = unknown_paths(&mut value)
        .iter()
        .map(|p| (path_text(p), object.line_of(p)))
        .collect();
    // In input order (the value's keys are sorted).
    found.sort_by_key(|f| f.1);
    found
}

/// Whether the object `value` (as the loader read it) has a field no schema of its kind has:
/// the loader judges every object it reads, and only a document with such an object is read
/// again for the lines ([`document_unknown_fields`]).
pub(crate) fn has_unknown_fields(value: &mut Value) -> bool {
    !unknown_paths(value).is_empty()
}

/// The paths of the unknown fields of the object `value`. `status` is not judged: the server and
/// controllers write it, never the user, and a newer server's status fields (a dump of a cluster
/// newer than the schemas known here) are no typo. It is taken out while the object is judged
/// and put back, so nothing is copied.
fn unknown_paths(value: &mut Value) -> Vec<Vec<Seg>> {
    let Value::Object(map) = value else {
        return Vec::new();
    };
    let status = map.remove("status");
    let object: &Value = value;
    let mut found: Vec<Vec<Seg>> = Vec::new();
    if let (Some(Value::String(api_version)), Some(Value::String(kind))) =
        (object.get("apiVersion"), object.get("kind"))
    {
        if let Some(tree) = schema::tree(api_version, kind) {
            walk(object, tree, &mut Vec::new(), &mut found);
        } else if !core_kinds::judge(api_version, kind, object, &mut found) {
            found.clear();
        }
    }
    if let (Some(status), Value::Object(map)) = (status, value) {
        map.insert("status".to_string(), status);
    }
    found
}

/// Walks `node` along its schema tree, noting each key the tree lacks.
fn walk(node: &Value, tree: &Value, path: &mut Vec<Seg>, found: &mut Vec<Vec<Seg>>) {
    let Value::Object(fields) = tree else {
        return;
    };
    match node {
        Value::Object(entries) => {
            let free = (fields.len() == 1).then(|| fields.get("*")).flatten();
            for (key, child) in entries {
                path.push(Seg::Key(key.clone()));
                // Every object's top-level metadata is an ObjectMeta (CRDs say only `object`).
                if path.len() == 1 && key == "metadata" {
                    core_kinds::judge_metadata(child, path, found);
                } else if let Some(sub) = free.or_else(|| fields.get(key)) {
                    walk(child, sub, path, found);
                } else {
                    found.push(path.clone());
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Seg::Index(i));
                walk(item, tree, path, found);
                path.pop();
            }
        }
        _ => {}
    }
}

/// What one document yields: its unknown fields (path, line).
struct DocFindings(Vec<(String, usize)>);

impl<'de> Deserialize<'de> for DocFindings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DocVisitor)
    }
}

struct DocVisitor;

impl<'de> Visitor<'de> for DocVisitor {
    type Value = DocFindings;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a Kubernetes object or list")
    }

    fn visit_unit<E>(self) -> Result<DocFindings, E> {
        Ok(DocFindings(Vec::new()))
    }

    fn visit_none<E>(self) -> Result<DocFindings, E> {
        Ok(DocFindings(Vec::new()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DocFindings, A::Error> {
        // A top-level `items` list (a `List`, whatever its `kind` line says, which kubectl prints
        // after it) is judged item by item as it streams; anything else is one object.
        let mut found = Vec::new();
        let mut entries = Vec::new();
        let mut list = false;
        while let Some(key) = map.next_key::<serde_saphyr::Spanned<String>>()? {
            if key.value == "items" {
                list = true;
                map.next_value_seed(Items(&mut found))?;
            } else {
                let value = map.next_value_seed(NodeSeed)?;
                entries.push((key.value, key.referenced.line() as usize, value));
            }
        }
        if !list {
            found.extend(judge(Node::Map(entries)));
        }
        Ok(DocFindings(found))
    }
}

/// A list's items, each judged and dropped as it is read.
struct Items<'a>(&'a mut Vec<(String, usize)>);

impl<'de> DeserializeSeed<'de> for Items<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Items<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element_seed(NodeSeed)? {
            self.0.extend(judge(item));
        }
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// Reads one [`Node`], keys with their lines.
struct NodeSeed;

impl<'de> DeserializeSeed<'de> for NodeSeed {
    type Value = Node;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed {
    type Value = Node;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Scalar(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Scalar(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Scalar(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Scalar(Value::from(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Scalar(Value::String(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Scalar(Value::String(v)))
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Scalar(Value::Null))
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Scalar(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(NodeSeed)? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<serde_saphyr::Spanned<String>>()? {
            let value = map.next_value_seed(NodeSeed)?;
            entries.push((key.value, key.referenced.line() as usize, value));
        }
        Ok(Node::Map(entries))
    }
}

#[cfg(test)]
mod tests;
