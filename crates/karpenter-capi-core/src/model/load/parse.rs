//! Text to objects: multi-document YAML or JSON split, parsed with a node budget sized to the
//! input (alias bombs still refused), `List`s flattened; errors name file, document and line.

use super::*;

/// Splits a multi-document YAML (or a JSON object) into Kubernetes objects, flattening `List`s.
/// Errors name the file, the document and its first line. An empty input (nothing but blanks,
/// comments or NUL bytes) is an error, not an empty success.
pub fn parse_source(source: &Source) -> Result<Vec<RawObject>, Error> {
    parse_source_with(source, |o| o)
}

/// [`parse_source`], each object handed to `each` as soon as it is read, on the worker that
/// parsed it, so a caller that keeps only what `each` makes of an object never holds every
/// object parsed at once (a parsed object costs about ten times its text). The errors, and the
/// order of the results, are [`parse_source`]'s.
pub(super) fn parse_source_with<T: Send>(
    source: &Source,
    each: impl Fn(RawObject) -> T + Sync,
) -> Result<Vec<T>, Error> {
    parse_in_runs(source, each, ITEMS_RUN_BYTES)
}

/// [`parse_source_with`], a large `List` read in runs of about `run_bytes` of its items.
pub(super) fn parse_in_runs<T: Send>(
    source: &Source,
    each: impl Fn(RawObject) -> T + Sync,
    run_bytes: usize,
) -> Result<Vec<T>, Error> {
    if source.text.contains('\0') {
        let problem = if source
            .text
            .trim_matches(|c: char| c == '\0' || c.is_whitespace())
            .is_empty()
        {
            "holds only NUL bytes: not YAML or JSON (a truncated or zeroed file?)"
        } else {
            "contains NUL bytes: not YAML or JSON text"
        };
        return Err(Error::Input {
            path: source.name.clone(),
            problem: problem.to_string(),
        });
    }
    let documents: Vec<(usize, usize, &str)> = split_documents(&source.text)
        .into_iter()
        .enumerate()
        .filter(|(_, (_, text))| {
            !text
                .lines()
                .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        })
        .map(|(index, (line, text))| (index + 1, line, text))
        .collect();
    // Documents parse independently, on every core, and so do runs of a large `List`'s items
    // (a `kubectl get -o yaml` dump is one document); the first error in file order wins.
    let read_whole = |doc: usize, line: usize, text: &str| {
        let origin = origin(source, doc);
        // Read as a stream when it can be (a `List`'s items one at a time); anything unusual
        // is read again whole, below, so results and errors are the same either way.
        if let Some(read) = super::stream::document(text, &origin, &each) {
            return read;
        }
        let value = parse_document(text).map_err(|e| yaml_error(source, doc, line, &e))?;
        let mut objects = Vec::new();
        flatten(value, &origin, &mut |o| objects.push(each(o)))?;
        Ok::<_, Error>(objects)
    };
    let pieces: Vec<(usize, Piece<'_>)> = documents
        .iter()
        .enumerate()
        .flat_map(|(at, &(_, _, text))| {
            pieces_of(text, run_bytes).into_iter().map(move |p| (at, p))
        })
        .collect();
    let parsed = crate::parallel::map(&pieces, |(at, piece)| {
        let (doc, line, text) = documents[*at];
        match piece {
            // Most documents hold one object: no spare room kept per document.
            Piece::Whole => Some(read_whole(doc, line, text).map(|mut objects| {
                objects.shrink_to_fit();
                objects
            })),
            // The List less its items reads as an empty List, or the document is read whole.
            Piece::Header(header) => super::stream::document(header, &origin(source, doc), &each)
                .filter(|read| read.as_ref().is_ok_and(Vec::is_empty)),
            Piece::Items(items) => super::stream::items(items, &origin(source, doc), &each),
        }
    });
    let read_objects = parsed.iter().flatten().flatten().map(Vec::len).sum();
    let mut results = pieces.iter().map(|(at, _)| *at).zip(parsed).peekable();
    let mut out = Vec::with_capacity(read_objects);
    for (at, &(doc, line, text)) in documents.iter().enumerate() {
        let mut reads = Vec::new();
        while let Some((_, read)) = results.next_if(|(of, _)| *of == at) {
            reads.push(read);
        }
        match reads.into_iter().collect::<Option<Vec<_>>>() {
            Some(reads) => {
                for read in reads {
                    out.extend(read?);
                }
            }
            // A part of a List did not parse on its own (an alias to another part, say).
            None => out.extend(read_whole(doc, line, text)?),
        }
    }
    if documents.is_empty() {
        return Err(Error::Input {
            path: source.name.clone(),
            problem: "is empty: expected Kubernetes objects in YAML or JSON \
                      (e.g. kubectl get pods,nodes -A -o yaml)"
                .to_string(),
        });
    }
    Ok(out)
}

/// Work for one core: a whole document, or a part of a large `List` in kubectl's layout.
pub(super) enum Piece<'a> {
    Whole,
    /// The `List` with `items: []` in place of its items.
    Header(String),
    /// A run of its items: a block sequence of its own.
    Items(&'a str),
}

/// A document's text, at least, in a run of its `List`'s items; larger documents are read in
/// runs of about this size, so every core has a share of a one-document dump.
const ITEMS_RUN_BYTES: usize = 512 << 10;

/// The pieces a document is read in: itself, or, for a `List` in kubectl's layout over twice
/// [`ITEMS_RUN_BYTES`], its header and runs of its items, each read on its own. Every piece must
/// read for the runs to be used (else the document is read whole), so the objects, their order
/// and the errors are a whole reading's.
pub(super) fn pieces_of(text: &str, run_bytes: usize) -> Vec<Piece<'_>> {
    if text.len() <= 2 * run_bytes {
        return vec![Piece::Whole];
    }
    let Some((header, items)) = list_items(text) else {
        return vec![Piece::Whole];
    };
    let mut pieces = vec![Piece::Header(header)];
    let mut run: Option<(usize, usize)> = None;
    let base = text.as_ptr() as usize;
    for item in items {
        let start = item.as_ptr() as usize - base;
        let end = start + item.len();
        let (from, _) = *run.get_or_insert((start, end));
        run = Some((from, end));
        if end - from >= run_bytes {
            pieces.push(Piece::Items(&text[from..end]));
            run = None;
        }
    }
    if let Some((from, end)) = run {
        pieces.push(Piece::Items(&text[from..end]));
    }
    pieces
}

/// Where an object comes from: its input and the number (from 1) of its document there.
pub(super) fn origin(source: &Source, doc: usize) -> String {
    format!("{}#{doc}", source.name)
}

/// A YAML error as `file:line:column: message`, the line counted from the start of the file
/// (documents are parsed one by one, so the parser's line is within the document), as editors
/// and compilers print positions.
fn yaml_error(source: &Source, doc: usize, first_line: usize, e: &serde_saphyr::Error) -> Error {
    use serde_saphyr::MessageFormatter;
    let message = serde_saphyr::DefaultMessageFormatter.format_message(e);
    match e.location() {
        Some(at) => Error::Input {
            path: format!(
                "{}:{}:{}",
                source.name,
                at.line() as usize + first_line - 1,
                at.column()
            ),
            problem: format!("not valid YAML (document {doc}): {message}"),
        },
        None => Error::Input {
            path: source.name.clone(),
            problem: format!(
                "document {doc} (from line {first_line}) is not valid YAML: {message}"
            ),
        },
    }
}

/// One document: JSON (`kubectl get -o json`) through the JSON parser, which is several times
/// faster on large dumps, else YAML. The YAML parser's budget grows with the document (a
/// `kubectl get pods -A -o yaml` of 20,000 pods is one `List` of millions of nodes); the
/// alias limits stay at their defaults, so an alias bomb is still refused.
pub(super) fn parse_document(text: &str) -> Result<Value, serde_saphyr::Error> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{')
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        return Ok(value);
    }
    serde_saphyr::from_str_with_options(text, yaml_options(text.len()))
}

/// Parser options for a document of `len` bytes: every budget that counts what the input itself
/// holds (nodes, events, scalar bytes) is at least the input's length, since each costs at
/// least one byte of it; expansion by aliases, which does not, keeps the default limits.
pub(super) fn yaml_options(len: usize) -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_nodes: len.max(250_000),
            max_events: len.saturating_mul(2).max(1_000_000),
            max_total_scalar_bytes: len.max(64 << 20),
        },
    }
}

/// Hands the objects of one parsed value to `out`: the value itself, or a `List`'s items (each
/// flattened in turn); null holds none.
pub(super) fn flatten(
    value: Value,
    origin: &str,
    out: &mut dyn FnMut(RawObject),
) -> Result<(), Error> {
    match value {
        Value::Null => Ok(()),
        Value::Object(ref map)
            if map
                .get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| k.ends_with("List"))
                && map.contains_key("items") =>
        {
            // Taken, not copied: a dump's List holds nearly all of it.
            let Value::Object(mut map) = value else {
                return Ok(());
            };
            if let Some(Value::Array(items)) = map.remove("items") {
                for item in items {
                    flatten(item, origin, out)?;
                }
            }
            Ok(())
        }
        Value::Object(_) => {
            out(RawObject::from_value(value, origin)?);
            Ok(())
        }
        _ => Err(Error::Input {
            path: origin.to_string(),
            problem: "expected a Kubernetes object (a mapping with apiVersion and kind)"
                .to_string(),
        }),
    }
}

/// Splits on `---` lines; returns each document with its 1-based first line.
pub(crate) fn split_documents(text: &str) -> Vec<(usize, &str)> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut start_line = 1;
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed.starts_with("--- ") {
            docs.push((start_line, &text[start..offset]));
            start = offset + line.len();
            start_line = i + 2;
        }
        offset += line.len();
    }
    docs.push((start_line, &text[start..]));
    docs
}

/// The items of a document whose `items:` key stands alone on a line at column 0, followed by
/// its block sequence written at column 0 (kubectl's layout): the document with `items: []` in
/// their place, and each item's text (its `- ` line and the indented, blank or comment lines
/// after it). None for any other layout, or fewer than two items.
pub(crate) fn list_items(text: &str) -> Option<(String, Vec<&str>)> {
    let mut offset = 0;
    let mut items_at = None;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "items:" {
            if items_at.is_some() {
                return None;
            }
            items_at = Some((offset, offset + line.len()));
        }
        offset += line.len();
    }
    let (key_start, block_start) = items_at?;
    let mut items: Vec<&str> = Vec::new();
    let mut item_start = None;
    let mut end = text.len();
    let mut at = block_start;
    for line in text[block_start..].split_inclusive('\n') {
        let starts_item = line.starts_with("- ") || line.trim_end() == "-";
        let continues = line.starts_with(' ') || line.trim().is_empty() || line.starts_with('#');
        if starts_item {
            if let Some(start) = item_start {
                items.push(&text[start..at]);
            }
            item_start = Some(at);
        } else if !continues {
            // A tab, or the next key of the document: the items end here.
            if line.starts_with('\t') {
                return None;
            }
            end = at;
            break;
        } else if item_start.is_none() && !line.trim().is_empty() && !line.starts_with('#') {
            // Indented content before the first `- `: another layout.
            return None;
        }
        at += line.len();
    }
    if let Some(start) = item_start {
        items.push(&text[start..end]);
    }
    if items.len() < 2 {
        return None;
    }
    let header = format!("{}items: []\n{}", &text[..key_start], &text[end..]);
    Some((header, items))
}
