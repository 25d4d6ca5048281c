//! Dumps read straight into records: a `List` document's items are parsed one at a time and
//! each object is turned into its record ([`convert`]) as soon as it is read, so a dump is
//! never held whole as parsed values (about ten times its text). Anything unusual in a document
//! (a syntax error, an `items` that is not a `List`'s) sends it back to the whole-document
//! reader, so results and errors are the same as reading it whole.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Map;

use super::parse::{flatten, yaml_options};
use super::*;

/// One object of a dump as read: its record (or why it cannot be read), the values clamped while
/// reading it, the owners it names that decide whether a workload is expanded, and its identity
/// for finding objects given twice.
pub(super) struct Loaded {
    record: Result<Record, Error>,
    oddities: Vec<Oddity>,
    owners: Vec<(OwnerOf, String)>,
    /// A hash of group, kind, namespace and name; none for an object without a name (the API
    /// server would name each anew, so such objects are never merged).
    key: Option<u64>,
    /// The origin (`file#document`) of an object judged to have an unknown field.
    unknown_in: Option<String>,
}

/// Reads one object into a [`Loaded`]: what [`Builder::add`] does before placing it; if
/// `judge`, noting whether it has a field no schema of its kind has.
pub(super) fn load(mut obj: RawObject, judge: bool) -> Loaded {
    let unknown_in = (judge && crate::model::fields::has_unknown_fields(&mut obj.value))
        .then(|| obj.origin.clone());
    let mut oddities = std::mem::take(&mut obj.oddities);
    oddities.extend(
        odd::clamped_quantities(&obj.kind, &obj.value)
            .into_iter()
            .map(|(field, text, used)| obj.oddity(field, text, used.to_string())),
    );
    let owners = obj
        .meta
        .owner_references
        .as_deref()
        .map(|refs| owner_keys(&obj.kind, obj.namespace(), refs))
        .unwrap_or_default();
    let key = obj
        .meta
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .map(|name| {
            let mut h = DefaultHasher::new();
            (obj.group(), obj.kind.as_str(), obj.namespace(), name).hash(&mut h);
            h.finish()
        });
    Loaded {
        record: convert(obj),
        oddities,
        owners,
        key,
        unknown_in,
    }
}

/// The origins (`file#document`) of the objects judged to have an unknown field.
pub(super) fn unknown_in(loaded: &[Loaded]) -> BTreeSet<String> {
    loaded.iter().filter_map(|l| l.unknown_in.clone()).collect()
}

/// Whether two objects may be one object given twice (their identities hash alike). Such inputs
/// are read again whole and compared ([`super::super::dedup`]); a false alarm only costs time.
pub(super) fn repeats(loaded: &[Loaded]) -> bool {
    let mut seen = HashSet::with_capacity(loaded.len());
    loaded
        .iter()
        .filter_map(|l| l.key)
        .any(|key| !seen.insert(key))
}

/// The snapshot of objects each given once, as [`build_snapshot`] builds it: every owner noted
/// first, then each record placed in input order; the first object that cannot be read is the
/// error.
pub(super) fn build(loaded: Vec<Loaded>) -> Result<Snapshot, Error> {
    let mut builder = Builder::new(false);
    for (of, key) in loaded.iter().flat_map(|l| &l.owners) {
        builder.expansion.note(*of, key.clone());
    }
    for l in loaded {
        commit(&mut builder.snap, l.record?, &mut builder.expansion)?;
        builder.oddities.extend(l.oddities);
    }
    Ok(builder.finish())
}

/// Reads one document as a stream: its objects, each through `each`, or the first object that
/// cannot be flattened; None when the document must be read whole instead (not valid, not a
/// mapping, or an `items` field that is not a `List`'s).
pub(super) fn document<T>(
    text: &str,
    origin: &str,
    each: &(impl Fn(RawObject) -> T + Sync),
) -> Option<Result<Vec<T>, Error>> {
    // The whole-document reader's choice of parser ([`super::parse::parse_document`]): JSON
    // when it reads as JSON, else YAML.
    if text.trim_start().starts_with('{')
        && let Some(read) = read_with(origin, each, |seed| {
            let mut de = serde_json::Deserializer::from_str(text);
            let doc = seed.deserialize(&mut de).ok()?;
            de.end().ok().map(|()| doc)
        })
    {
        return Some(read);
    }
    yaml_in_sequence(text, origin, each)
}

/// [`document`]'s YAML reader, a `List`'s items one after another.
fn yaml_in_sequence<T>(
    text: &str,
    origin: &str,
    each: &(impl Fn(RawObject) -> T + Sync),
) -> Option<Result<Vec<T>, Error>> {
    read_with(origin, each, |seed| {
        serde_saphyr::with_deserializer_from_str_with_options(
            text,
            yaml_options(text.len()),
            |de| seed.deserialize(de),
        )
        .ok()
    })
}

/// The item [`items`] appends to a run: it must come out as itself, last.
const END_OF_RUN: &str = "end-of-run.karpenter-capi.invalid";

/// A run of a `List`'s items, a block sequence on its own ([`super::parse`] reads a large
/// `List` in such runs): their objects, each through `each`, or the first item that cannot be
/// flattened; None when the run does not parse on its own, or does not end where an item can
/// begin. That is checked by reading one more item after it, which must come out whole: a run
/// ending inside an open quote or flow (broken at that point of the whole document) swallows it
/// (the YAML reader takes an unterminated quote after a comment line for nothing).
pub(super) fn items<T>(
    text: &str,
    origin: &str,
    each: &(impl Fn(RawObject) -> T + Sync),
) -> Option<Result<Vec<T>, Error>> {
    let text = format!("{text}- {END_OF_RUN}\n");
    let mut out = Vec::new();
    let mut failed: Option<Error> = None;
    // Each item is flattened when the next one arrives: the last must be the end marker.
    let mut held: Option<serde_json::Value> = None;
    let mut item = |value: serde_json::Value| {
        if let Some(previous) = held.replace(value)
            && failed.is_none()
            && let Err(e) = flatten(previous, origin, &mut |o| out.push(each(o)))
        {
            failed = Some(e);
        }
    };
    serde_saphyr::with_deserializer_from_str_with_options(&text, yaml_options(text.len()), |de| {
        ItemsSeed { item: &mut item }.deserialize(de)
    })
    .ok()?;
    if held.as_ref().and_then(serde_json::Value::as_str) != Some(END_OF_RUN) {
        return None;
    }
    Some(match failed {
        Some(e) => Err(e),
        None => Ok(out),
    })
}

/// One streamed read of a document with `parse` (JSON or YAML).
fn read_with<T>(
    origin: &str,
    each: &(impl Fn(RawObject) -> T + Sync),
    parse: impl FnOnce(DocumentSeed<'_>) -> Option<Document>,
) -> Option<Result<Vec<T>, Error>> {
    let mut out = Vec::new();
    let mut failed: Option<Error> = None;
    let mut item = |value: serde_json::Value| {
        if failed.is_none()
            && let Err(e) = flatten(value, origin, &mut |o| out.push(each(o)))
        {
            failed = Some(e);
        }
    };
    let doc = parse(DocumentSeed { item: &mut item })?;
    match doc {
        Document::Null => Some(Ok(Vec::new())),
        Document::Object { map, items: false } => {
            let read = flatten(serde_json::Value::Object(map), origin, &mut |o| {
                out.push(each(o))
            });
            Some(read.map(|()| out))
        }
        Document::Object { map, items: true }
            if map
                .get("kind")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|k| k.ends_with("List")) =>
        {
            Some(match failed {
                Some(e) => Err(e),
                None => Ok(out),
            })
        }
        Document::Object { .. } => None,
    }
}

/// A document as the stream saw it: null, or a mapping whose `items` sequence (if it had one)
/// went item by item to the sink and is not in `map`.
enum Document {
    Null,
    Object {
        map: Map<String, serde_json::Value>,
        items: bool,
    },
}

/// Reads a document, handing each element of a top-level `items` sequence to `item`.
struct DocumentSeed<'a> {
    item: &'a mut dyn FnMut(serde_json::Value),
}

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_> {
    type Value = Document;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Document, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DocumentSeed<'_> {
    type Value = Document;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Document, E> {
        Ok(Document::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Document, E> {
        Ok(Document::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Document, A::Error> {
        let mut map = Map::new();
        let mut items = false;
        while let Some(key) = access.next_key::<String>()? {
            if key == "items" {
                if items {
                    return Err(serde::de::Error::custom("items given twice"));
                }
                items = true;
                access.next_value_seed(ItemsSeed {
                    item: &mut *self.item,
                })?;
            } else {
                map.insert(key, access.next_value()?);
            }
        }
        Ok(Document::Object { map, items })
    }
}

/// Reads an `items` sequence element by element; anything else is refused (the document is then
/// read whole).
struct ItemsSeed<'a> {
    item: &'a mut dyn FnMut(serde_json::Value),
}

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        while let Some(value) = access.next_element::<serde_json::Value>()? {
            (self.item)(value);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::{flatten, parse_document};
    use super::*;

    fn src(text: &str) -> Source {
        Source {
            name: "t.yaml".to_string(),
            text: text.to_string(),
        }
    }

    /// The objects of one document read whole (parsed to one value, then flattened), as
    /// (origin, value).
    fn whole(text: &str) -> Result<Vec<(String, serde_json::Value)>, String> {
        let value = parse_document(text).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        flatten(value, "t.yaml#1", &mut |o| out.push((o.origin, o.value)))
            .map_err(|e| e.to_string())?;
        Ok(out)
    }

    fn streamed(text: &str) -> Option<Result<Vec<(String, serde_json::Value)>, String>> {
        document(text, "t.yaml#1", &|o: RawObject| (o.origin, o.value))
            .map(|r| r.map_err(|e| e.to_string()))
    }

    const POD: &str = "{apiVersion: v1, kind: Pod, metadata: {name: a, namespace: d}, spec: {containers: [{name: c}]}}";

    #[test]
    fn a_list_streams_item_by_item_to_the_objects_read_whole() {
        let json = serde_json::json!({"apiVersion": "v1",
            "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}},
                      {"apiVersion": "v1", "kind": "List", "items": [
                          {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}]}],
            "kind": "List", "metadata": {"resourceVersion": ""}})
        .to_string();
        for text in [
            // kubectl's order: items before kind.
            format!("apiVersion: v1\nitems:\n- {POD}\n- {POD}\nkind: List\nmetadata: {{}}\n"),
            format!("kind: PodList\napiVersion: v1\nitems: [{POD}]\n"),
            json,
        ] {
            let got = streamed(&text).expect("streams");
            assert_eq!(got, whole(&text), "{text}");
            assert!(!got.unwrap().is_empty());
        }
        // A plain object, and a List without items (an object itself).
        for text in [POD.to_string(), "apiVersion: v1\nkind: List\n".to_string()] {
            let got = streamed(&text).expect("streams");
            assert_eq!(got, whole(&text), "{text}");
            assert_eq!(got.unwrap().len(), 1);
        }
        assert_eq!(streamed("~\n"), Some(Ok(Vec::new())));
    }

    /// A `kubectl get pods -o yaml` of `n` pods in kubectl's layout, `extra` after pod 0's
    /// `metadata` (an anchor, say) and `last` as its final item.
    fn kubectl_list(n: usize, extra: &str, last: &str) -> String {
        let mut text = "apiVersion: v1\nitems:\n".to_string();
        for i in 0..n {
            let more = if i == 0 { extra } else { "" };
            text.push_str(&format!(
                "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p{i}\n    namespace: d\n    labels: {{app: web-{}}}\n{more}  spec:\n    containers:\n    - name: c\n      resources:\n        requests: {{cpu: {}m, memory: 64Mi}}\n  status: {{phase: Pending}}\n",
                i % 7,
                100 + i % 900
            ));
        }
        text.push_str(last);
        text.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
        text
    }

    /// The objects of `text` as the loader reads them (a large List in runs, on every core).
    fn read(text: &str) -> Result<Vec<(String, serde_json::Value)>, String> {
        parse_source(&src(text))
            .map(|objects| objects.into_iter().map(|o| (o.origin, o.value)).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_large_list_read_in_runs_on_every_core_gives_the_whole_readings_objects() {
        // 8,000 pods: 1.8 MB, read as a header and four runs of about 512 KiB.
        let text = kubectl_list(8_000, "", "");
        assert_eq!(text.len(), 1_798_955);
        let pieces = super::super::parse::pieces_of(&text, 512 << 10);
        assert_eq!(pieces.len(), 5);
        // Each run reads on its own (the document is not read whole instead).
        let mut objects = 0;
        for piece in &pieces[1..] {
            let super::super::parse::Piece::Items(run) = piece else {
                panic!("a run of items");
            };
            objects += items(run, "t.yaml#1", &|o: RawObject| o.value)
                .expect("reads alone")
                .unwrap()
                .len();
        }
        assert_eq!(objects, 8_000);
        let got = read(&text).unwrap();
        assert_eq!(got.len(), 8_000);
        assert_eq!(got, whole(&text).unwrap());
        assert_eq!(got[7_999].1["metadata"]["name"], "p7999");
        // The snapshot too, field for field.
        let (snapshot, _) = load_sources(&[src(&text)]).unwrap();
        let reference = build_snapshot(parse_source(&src(&text)).unwrap()).unwrap();
        assert_eq!(snapshot.pods.len(), 8_000);
        assert_eq!(format!("{snapshot:?}"), format!("{reference:?}"));
    }

    #[test]
    fn a_large_list_whose_runs_do_not_read_alone_is_read_whole() {
        // The last pod refers to an anchor in the first: its run cannot be read alone.
        let aliased = kubectl_list(
            8_000,
            "    annotations: &shared {team: a}\n",
            "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: d, annotations: *shared}}\n",
        );
        let got = read(&aliased).unwrap();
        assert_eq!(got.len(), 8_001);
        assert_eq!(got, whole(&aliased).unwrap());
        assert_eq!(got[8_000].1["metadata"]["annotations"]["team"], "a");
        // Not an object near the end: the whole reading's error.
        let bad = kubectl_list(8_000, "", "- 42\n");
        assert_eq!(
            read(&bad).unwrap_err(),
            "t.yaml#1: expected a Kubernetes object (a mapping with apiVersion and kind)"
        );
        // A syntax error in the last run: the whole reading's error, at its line in the file.
        let broken = kubectl_list(8_000, "", "- {apiVersion: v1, kind: [\n");
        let err = read(&broken).unwrap_err();
        let lines = broken.lines().count();
        assert!(err.starts_with(&format!("t.yaml:{}:", lines - 2)), "{err}");
        assert!(err.contains("not valid YAML (document 1)"), "{err}");
    }

    /// Lines a kubectl-laid-out List's items are made of in [`runs_read_as_the_whole`]: valid
    /// and broken, quotes and flows left open, anchors, aliases, block scalars and comments.
    const LINES: &[&str] = &[
        "- apiVersion: v1",
        "  kind: Pod",
        "  metadata: {name: a, namespace: d}",
        "- {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: d}}",
        "- &x {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}",
        "- *x",
        "-",
        "# c",
        "",
        "  'quoted",
        "  \"double",
        "  end'",
        "  x: 'y'",
        "  note: |",
        "    text",
        "  - nested",
        "  items:",
        "- 42",
        "- [",
        "  ]",
        "  {",
        "  }",
        "-   kind: Node",
        "  - {a: 1,",
        "    b: 2}",
        "- |",
        "- ? k",
        "  : v",
        "- key: &y v",
        "  other: *y",
        "- !!str tagged",
        "kind: Pod",
        "...",
    ];

    proptest::proptest! {
        /// Read in runs of its items (every size down to one item a run), a List gives the
        /// objects, or the error, of one whole reading, however its items are broken.
        #[test]
        fn runs_read_as_the_whole(
            picks in proptest::collection::vec(0..LINES.len(), 1..24),
            run in 1usize..48,
        ) {
            let mut text = "apiVersion: v1\nitems:\n".to_string();
            for &i in &picks {
                text.push_str(LINES[i]);
                text.push('\n');
            }
            text.push_str("kind: List\nmetadata: {}\n");
            let read = |run_bytes: usize| {
                super::super::parse::parse_in_runs(&src(&text), |o| (o.origin, o.value), run_bytes)
                    .map_err(|e| e.to_string())
            };
            proptest::prop_assert_eq!(read(run), read(usize::MAX / 4), "{}", text);
        }
    }

    #[test]
    fn anything_unusual_is_read_whole() {
        for text in [
            // `items` of an object that is not a List: the object keeps them.
            format!(
                "apiVersion: example.com/v1\nkind: Bag\nmetadata: {{name: b}}\nitems: [{POD}]\n"
            ),
            format!("apiVersion: v1\nkind: List\nitems: [{POD}]\nitems: [{POD}]\n"),
            "apiVersion: v1\nkind: List\nitems: {a: 1}\n".to_string(),
            // A syntax error after the items: the error, not the items.
            format!("apiVersion: v1\nkind: List\nitems:\n- {POD}\n- [\n"),
            "- a\n- b\n".to_string(),
        ] {
            assert_eq!(streamed(&text), None, "{text}");
        }
        // Not JSON after all: read as YAML, as whole.
        let text =
            format!("{{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{POD}]}} # c\n");
        assert_eq!(streamed(&text).expect("streams"), whole(&text));
        assert_eq!(whole(&text).map(|o| o.len()), Ok(1));
        // Read whole, a List of a non-object fails on it; streamed, the same error.
        let text = format!("apiVersion: v1\nitems: [{POD}, 42]\nkind: List\n");
        let got = streamed(&text).expect("streams");
        assert_eq!(got, whole(&text));
        assert_eq!(
            got.unwrap_err(),
            "t.yaml#1: expected a Kubernetes object (a mapping with apiVersion and kind)"
        );
    }

    #[test]
    fn a_dump_builds_the_snapshot_the_whole_reader_builds() {
        let text = format!(
            "apiVersion: v1\nitems:\n- {POD}\n- {{apiVersion: apps/v1, kind: ReplicaSet, metadata: {{name: rs, namespace: d, ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: web, uid: u}}]}}, spec: {{replicas: 2, template: {{spec: {{containers: [{{name: c}}]}}}}}}}}\nkind: List\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: d}}\nspec: {{replicas: 5, template: {{spec: {{containers: [{{name: c}}]}}}}}}\n---\napiVersion: v1\nkind: Node\nmetadata: {{name: n1, creationTimestamp: '9999-12-31T23:59:59Z'}}\nstatus: {{allocatable: {{cpu: '4', memory: 9Ei}}}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\n"
        );
        let (streamed, notes) = load_sources(&[src(&text)]).unwrap();
        assert!(notes.is_empty());
        let whole = build_snapshot(parse_source(&src(&text)).unwrap()).unwrap();
        assert_eq!(format!("{streamed:?}"), format!("{whole:?}"));
        // The ReplicaSet stands for the Deployment: 1 pod + 2 of its replicas.
        assert_eq!(streamed.pods.len(), 3);
        assert_eq!(streamed.oddities.len(), 2);
        // The first object that cannot be read is the error, as read whole.
        let bad = format!(
            "{text}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: x, namespace: d}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: 4x}}}}}}]}}\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: p}}\nspec: {{limits: {{cpu: 1y}}}}\n"
        );
        let err = load_sources(&[src(&bad)]).unwrap_err().to_string();
        assert!(err.starts_with("t.yaml#5: Pod d/x: "), "{err}");
        assert_eq!(
            err,
            build_snapshot(parse_source(&src(&bad)).unwrap())
                .unwrap_err()
                .to_string()
        );
    }

    #[test]
    fn an_object_given_twice_is_compared_whole_and_noted() {
        let (snapshot, notes) = load_sources(&[src(POD), src(POD)]).unwrap();
        assert_eq!(snapshot.pods.len(), 1);
        assert_eq!(
            notes,
            vec!["Pod d/a is given twice (t.yaml#1, t.yaml#1); used once"]
        );
        let other = POD.replace("name: c}", "name: other}");
        let err = load_sources(&[src(POD), src(&other)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("different contents"), "{err}");
    }
}
