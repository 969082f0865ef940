//! `cargo xtask layers`: each crate's modules form layers, the arrows one way.
//!
//! Reads every Rust crate of the workspace (`src/`, from each root: `lib.rs`,
//! `main.rs`, `bin/*.rs`, following `mod name;` to its file), one node per
//! file (`foo.rs` and `foo/mod.rs` are module `foo`), and draws an arrow from
//! a module to each module whose items it names: `use crate::…`, `use
//! super::…` (and `self::`, and a child's name), the same paths written in
//! the code, `pub use` re-exports. A path that names an item a module
//! re-exports (`pub use x::Item`, or `pub use x::*` of a module defining it)
//! points at the module that defines it, so re-exporting through a parent
//! hides no arrow. It fails naming every circle: a strongly connected set of
//! two or more modules, with what each takes from the next.
//!
//! Two kinds of reference draw no arrow:
//! - a module's use of its own descendants (`mod x; pub use x::*;`, `use
//!   child::Item`): a module is made of its children, and declaring,
//!   re-exporting and calling into them is that, not a layer above them.
//!   A child's use of its parent's items (`super::Shared`) is an arrow like
//!   any other, so a parent that holds what its children share must not use
//!   the children's items in turn (through a sibling, say) without a circle;
//! - `#[cfg(test)]` modules written inside a file: a file's unit tests use
//!   the crate as its other tests do, from above.
//!
//! The reading is lexical (comments and strings are dropped, then the tokens
//! scanned), which is what the project's code needs: it writes no macros that
//! make paths and no `#[path]` modules under `src/`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The crates read: the workspace's members that have a `src/`.
pub fn run(root: &Path) -> Result<(), String> {
    let manifest = root.join("Cargo.toml");
    let text =
        std::fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let value: toml::Table = toml::from_str(&text).map_err(|e| format!("Cargo.toml: {e}"))?;
    let members = value
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .ok_or("Cargo.toml: no [workspace] members")?;
    let mut failures = String::new();
    let mut summary = Vec::new();
    for member in members.iter().filter_map(|m| m.as_str()) {
        let src = root.join(member).join("src");
        if !src.is_dir() {
            continue;
        }
        for crate_root in crate_roots(&src) {
            let files = read_tree(&src, &crate_root)?;
            let graph = Graph::of(&files);
            let circles = graph.circles();
            let label = format!("{member}/src/{}", crate_root.display());
            summary.push(format!("{label} ({} modules)", graph.modules.len()));
            for circle in circles {
                let _ = writeln!(failures, "{label}: {}", graph.describe(&circle));
            }
        }
    }
    if !failures.is_empty() {
        return Err(format!(
            "layers: import circles between modules:\n{failures}"
        ));
    }
    println!(
        "layers: no import circle in {} crate roots: {}",
        summary.len(),
        summary.join(", ")
    );
    Ok(())
}

/// The crate roots under `src`: `lib.rs`, `main.rs`, `bin/*.rs`.
fn crate_roots(src: &Path) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(PathBuf::from)
        .filter(|p| src.join(p).is_file())
        .collect();
    if let Ok(entries) = std::fs::read_dir(src.join("bin")) {
        let mut bins: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| Path::new("bin").join(e.file_name()))
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .collect();
        bins.sort();
        roots.extend(bins);
    }
    roots
}

/// A crate's files by module path (the root is `[]`), read from `src` by
/// following `mod name;` from `crate_root`.
fn read_tree(src: &Path, crate_root: &Path) -> Result<Files, String> {
    let mut files = Files::new();
    let mut pending = vec![(Vec::new(), crate_root.to_owned())];
    while let Some((module, path)) = pending.pop() {
        let full = src.join(&path);
        let text =
            std::fs::read_to_string(&full).map_err(|e| format!("{}: {e}", full.display()))?;
        let tokens = tokens(&text);
        // A root or a mod.rs holds its children beside it; foo.rs in foo/.
        let is_dir_owner = module.is_empty() || path.file_name().is_some_and(|n| n == "mod.rs");
        let dir = if is_dir_owner {
            path.parent().unwrap_or(Path::new("")).to_owned()
        } else {
            path.with_extension("")
        };
        for child in declared_children(&tokens) {
            let flat = dir.join(format!("{child}.rs"));
            let nested = dir.join(&child).join("mod.rs");
            let found = [flat, nested].into_iter().find(|p| src.join(p).is_file());
            if let Some(found) = found {
                let mut child_module = module.clone();
                child_module.push(child);
                pending.push((child_module, found));
            }
        }
        files.insert(module, (path, text));
    }
    Ok(files)
}

/// Module path → (file, text).
type Files = BTreeMap<Vec<String>, (PathBuf, String)>;

// ---- tokens --------------------------------------------------------------------------------

/// The text's identifiers and punctuation (`::` as one token), without
/// comments, strings, characters and lifetimes.
fn tokens(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if bytes[i..].starts_with(b"//") {
            i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
        } else if bytes[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < bytes.len() {
                if bytes[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if bytes[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r' && raw_string_start(&bytes[i..]).is_some() {
            let hashes = raw_string_start(&bytes[i..]).unwrap_or(0);
            let close = format!("\"{}", "#".repeat(hashes));
            let body = i + 2 + hashes;
            i = text[body..]
                .find(&close)
                .map_or(bytes.len(), |n| body + n + close.len());
        } else if c == b'"' || (c == b'b' && bytes.get(i + 1) == Some(&b'"')) {
            i += if c == b'b' { 2 } else { 1 };
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == b'\'' {
            // A character ('a', '\n', '\u{1F600}') or a lifetime ('a).
            let rest = &text[i + 1..];
            let mut chars = rest.char_indices();
            match chars.next() {
                Some((_, '\\')) => {
                    // The backslash and the escaped character, then up to the closing quote.
                    let after = rest.get(2..).unwrap_or("");
                    i += 3 + after.find('\'').map_or(after.len(), |n| n + 1);
                }
                Some((_, ch)) if rest[ch.len_utf8()..].starts_with('\'') => {
                    i += 2 + ch.len_utf8();
                }
                _ => {
                    i += 1;
                    while i < bytes.len() && is_ident(bytes[i]) {
                        i += 1;
                    }
                }
            }
        } else if is_ident(c) {
            let start = i;
            while i < bytes.len() && is_ident(bytes[i]) {
                i += 1;
            }
            out.push(text[start..i].to_owned());
        } else if bytes[i..].starts_with(b"::") {
            out.push("::".into());
            i += 2;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch.to_string());
            i += ch.len_utf8();
        }
    }
    out
}

/// The number of `#` of a raw string (`r"`, `r#"`, `br"` is read as `b` then this) starting here.
fn raw_string_start(bytes: &[u8]) -> Option<usize> {
    let hashes = bytes[1..].iter().take_while(|&&b| b == b'#').count();
    (bytes.get(1 + hashes) == Some(&b'"')).then_some(hashes)
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The names of `mod name;` at the file's top level (inline modules' own are theirs).
fn declared_children(tokens: &[String]) -> Vec<String> {
    let mut children = Vec::new();
    let mut depth = 0usize;
    // Whether the item being read is `#[cfg(test)]` (a file of unit tests: not read).
    let mut test_only = false;
    for (i, t) in tokens.iter().enumerate() {
        match t.as_str() {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "#" if depth == 0 && is_cfg_test(tokens, i) => test_only = true,
            "mod" if depth == 0 && !test_only && tokens.get(i + 2).is_some_and(|t| t == ";") => {
                children.extend(tokens.get(i + 1).cloned());
            }
            _ => {}
        }
        if t == ";" || t == "}" {
            test_only = false;
        }
    }
    children
}

// ---- what a file refers to ------------------------------------------------------------------

/// One file read: the paths it names (each as written, with how many inline
/// modules deep it stands), its `pub use` re-exports and the items it defines.
#[derive(Default)]
struct Reading {
    /// (inline depth, path segments) of every `use` and every `a::b` path.
    paths: Vec<(usize, Vec<String>)>,
    /// Re-exported name (`*` for a glob) → the path it comes from (its last
    /// segment the name there, or `*`).
    reexports: Vec<(String, Vec<String>)>,
    /// Names the file defines at its top level.
    defines: BTreeSet<String>,
    /// Names its top-level `use`s bring in (not globs) → the path each names.
    imports: BTreeMap<String, Vec<String>>,
}

const ITEM_KEYWORDS: [&str; 10] = [
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "const",
    "static",
    "mod",
    "union",
    "macro_rules",
];

fn read(tokens: &[String]) -> Reading {
    let mut reading = Reading::default();
    // The brace depth at which each open inline module began (test ones are skipped).
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i].as_str();
        match t {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
            }
            "#" if is_cfg_test(tokens, i) => {
                // `#[cfg(test)] mod tests { … }`, or another item only tests
                // compile: skipped.
                let after = attribute_end(tokens, i);
                let mut j = after;
                while tokens.get(j).is_some_and(|t| t == "#") {
                    j = attribute_end(tokens, j);
                }
                // The item it gates ends at its first `;` or with the block its first `{` opens.
                let ends = (j..tokens.len()).find(|&k| tokens[k] == ";" || tokens[k] == "{");
                i = match ends {
                    Some(k) if tokens[k] == "{" => block_end(tokens, k),
                    Some(k) => k + 1,
                    None => tokens.len(),
                };
                continue;
            }
            "mod" if tokens.get(i + 2).is_some_and(|t| t == "{") => {
                inline.push(depth);
            }
            "use" => {
                let is_pub = i > 0 && (tokens[i - 1] == "pub" || tokens[i - 1] == ")");
                let end = (i..tokens.len())
                    .find(|&j| tokens[j] == ";")
                    .unwrap_or(tokens.len());
                let mut flat = Vec::new();
                use_tree(&tokens[i + 1..end], &[], &mut flat);
                for (path, alias) in flat {
                    let name = alias.unwrap_or_else(|| path.last().cloned().unwrap_or_default());
                    if inline.is_empty() && depth == 0 {
                        if is_pub {
                            reading.reexports.push((name.clone(), path.clone()));
                        }
                        if name != "*" && name != "self" {
                            reading.imports.insert(name, path.clone());
                        }
                    }
                    reading.paths.push((inline.len(), path));
                }
                i = end + 1;
                continue;
            }
            _ if depth == 0 && inline.is_empty() && ITEM_KEYWORDS.contains(&t) => {
                let name_at = if t == "macro_rules" { i + 2 } else { i + 1 };
                if let Some(name) = tokens.get(name_at) {
                    if name.bytes().all(is_ident) {
                        reading.defines.insert(name.clone());
                    }
                }
            }
            _ if is_path_start(tokens, i) => {
                let mut path = vec![tokens[i].clone()];
                let mut j = i + 1;
                while tokens.get(j).is_some_and(|t| t == "::")
                    && tokens.get(j + 1).is_some_and(|t| t.bytes().all(is_ident))
                {
                    path.push(tokens[j + 1].clone());
                    j += 2;
                }
                reading.paths.push((inline.len(), path));
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    reading
}

/// An expression path that can name this crate's modules: `crate::`,
/// `super::`, `self::` or a name followed by `::` (a child module, a type's
/// associated item, another crate: resolution sorts them out), not itself
/// the tail of a longer path.
fn is_path_start(tokens: &[String], i: usize) -> bool {
    let t = &tokens[i];
    t.bytes().all(is_ident)
        && !t.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && tokens.get(i + 1).is_some_and(|n| n == "::")
        && !(i > 0 && tokens[i - 1] == "::")
}

fn is_cfg_test(tokens: &[String], i: usize) -> bool {
    tokens.get(i + 1).is_some_and(|t| t == "[")
        && tokens.get(i + 2).is_some_and(|t| t == "cfg")
        && tokens.get(i + 3).is_some_and(|t| t == "(")
        && tokens.get(i + 4).is_some_and(|t| t == "test")
        && tokens.get(i + 5).is_some_and(|t| t == ")")
}

/// The index after the attribute starting at `#` (index `i`).
fn attribute_end(tokens: &[String], i: usize) -> usize {
    let mut depth = 0;
    for (j, t) in tokens.iter().enumerate().skip(i + 1) {
        match t.as_str() {
            "[" => depth += 1,
            "]" => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// The index after the block whose `{` is at `open`.
fn block_end(tokens: &[String], open: usize) -> usize {
    let mut depth = 0;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match t.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// Flattens a use tree (`a::{b, c::{d as e, *}}`) into (path, alias) pairs.
fn use_tree(tokens: &[String], prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
    let mut i = 0;
    let mut path = prefix.to_vec();
    while i < tokens.len() {
        match tokens[i].as_str() {
            "::" => i += 1,
            "{" => {
                let end = matching(tokens, i);
                // Split the group's items at top-level commas.
                let inner = &tokens[i + 1..end];
                let mut start = 0;
                let mut depth = 0;
                for (j, t) in inner.iter().enumerate() {
                    match t.as_str() {
                        "{" => depth += 1,
                        "}" => depth -= 1,
                        "," if depth == 0 => {
                            use_tree(&inner[start..j], &path, out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                if start < inner.len() {
                    use_tree(&inner[start..], &path, out);
                }
                return;
            }
            "as" => {
                let alias = tokens.get(i + 1).cloned();
                out.push((path, alias));
                return;
            }
            "self" if !path.is_empty() => i += 1, // `a::{self}` is `a`
            t => {
                path.push(t.to_owned());
                i += 1;
            }
        }
    }
    if !path.is_empty() {
        out.push((path, None));
    }
}

/// The index of the `}` closing the `{` at `open`.
fn matching(tokens: &[String], open: usize) -> usize {
    block_end(tokens, open) - 1
}

// ---- the graph ------------------------------------------------------------------------------

struct Graph {
    /// Module paths, indexed.
    modules: Vec<Vec<String>>,
    /// from → to → the names `from` takes from `to`.
    arrows: BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>>,
}

impl Graph {
    fn of(files: &Files) -> Graph {
        let modules: Vec<Vec<String>> = files.keys().cloned().collect();
        let readings: BTreeMap<&Vec<String>, Reading> = files
            .iter()
            .map(|(module, (_, text))| (module, read(&tokens(text))))
            .collect();
        let index: BTreeMap<&Vec<String>, usize> =
            modules.iter().enumerate().map(|(i, m)| (m, i)).collect();
        let mut arrows: BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>> = BTreeMap::new();
        for (from, reading) in &readings {
            for (inline_depth, path) in &reading.paths {
                let Some((to, name)) = resolve(from, *inline_depth, path, &readings, 0) else {
                    continue;
                };
                // A module's use of itself or of its own descendants is no arrow.
                if to.starts_with(from) {
                    continue;
                }
                if let Some(&to) = index.get(&to) {
                    arrows
                        .entry(index[from])
                        .or_default()
                        .entry(to)
                        .or_default()
                        .insert(name);
                }
            }
        }
        Graph { modules, arrows }
    }

    /// The strongly connected sets of two or more modules (Tarjan's algorithm).
    fn circles(&self) -> Vec<Vec<usize>> {
        struct State<'a> {
            graph: &'a Graph,
            next: usize,
            index: Vec<Option<usize>>,
            low: Vec<usize>,
            stack: Vec<usize>,
            on_stack: Vec<bool>,
            found: Vec<Vec<usize>>,
        }
        fn visit(s: &mut State<'_>, v: usize) {
            s.index[v] = Some(s.next);
            s.low[v] = s.next;
            s.next += 1;
            s.stack.push(v);
            s.on_stack[v] = true;
            let targets: Vec<usize> = s
                .graph
                .arrows
                .get(&v)
                .map(|t| t.keys().copied().collect())
                .unwrap_or_default();
            for w in targets {
                match s.index[w] {
                    None => {
                        visit(s, w);
                        s.low[v] = s.low[v].min(s.low[w]);
                    }
                    Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(s.low[v]) == s.index[v] {
                let mut set = Vec::new();
                while let Some(w) = s.stack.pop() {
                    s.on_stack[w] = false;
                    set.push(w);
                    if w == v {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort_unstable();
                    s.found.push(set);
                }
            }
        }
        let n = self.modules.len();
        let mut state = State {
            graph: self,
            next: 0,
            index: vec![None; n],
            low: vec![0; n],
            stack: Vec::new(),
            on_stack: vec![false; n],
            found: Vec::new(),
        };
        for v in 0..n {
            if state.index[v].is_none() {
                visit(&mut state, v);
            }
        }
        state.found.sort();
        state.found
    }

    fn name(&self, module: usize) -> String {
        let path = &self.modules[module];
        if path.is_empty() {
            "crate".into()
        } else {
            path.join("::")
        }
    }

    /// A circle in words: its modules, then each arrow inside it with the names it takes.
    fn describe(&self, circle: &[usize]) -> String {
        let names: Vec<String> = circle.iter().map(|&m| self.name(m)).collect();
        let mut text = format!("a circle of {} modules: {}", circle.len(), names.join(", "));
        for &from in circle {
            for (to, taken) in self.arrows.get(&from).into_iter().flatten() {
                if circle.contains(to) {
                    let taken: Vec<&str> = taken.iter().map(String::as_str).collect();
                    let _ = write!(
                        text,
                        "\n    {} -> {}: {}",
                        self.name(from),
                        self.name(*to),
                        taken.join(", ")
                    );
                }
            }
        }
        text
    }
}

/// The module a path written in `from` (`inline_depth` inline modules deep)
/// names, and the name it takes there (the segment after the module, or the
/// module's own name), following re-exports to the module that defines it.
/// `None` for what is not this crate's (another crate, a local, `Self::`).
fn resolve(
    from: &[String],
    inline_depth: usize,
    path: &[String],
    readings: &BTreeMap<&Vec<String>, Reading>,
    hops: usize,
) -> Option<(Vec<String>, String)> {
    let (mut module, rest): (Vec<String>, &[String]) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (from.to_vec(), &path[1..]),
        "super" => {
            let supers = path.iter().take_while(|s| *s == "super").count();
            // Inside an inline module, the first `super`s stay in this file.
            let leaving = supers.saturating_sub(inline_depth);
            if leaving > from.len() {
                return None;
            }
            (from[..from.len() - leaving].to_vec(), &path[supers..])
        }
        // A child module's name (2018 paths), a name a `use` of the file
        // brought in, else not this crate's.
        first => {
            let mut child = from.to_vec();
            child.push(first.to_owned());
            if !readings.contains_key(&child) {
                let imported = readings.get(&from.to_vec())?.imports.get(first)?;
                if path.len() == 1 || hops > 8 || imported.first().is_some_and(|f| f == first) {
                    return None;
                }
                let mut whole = imported.clone();
                whole.extend_from_slice(&path[1..]);
                return resolve(from, inline_depth, &whole, readings, hops + 1);
            }
            (child, &path[1..])
        }
    };
    let mut rest = rest;
    while let Some(next) = rest.first() {
        let mut deeper = module.clone();
        deeper.push(next.clone());
        if !readings.contains_key(&deeper) {
            break;
        }
        module = deeper;
        rest = &rest[1..];
    }
    let Some(name) = rest.first() else {
        let name = module.last().cloned().unwrap_or_else(|| "crate".into());
        return Some((module, name));
    };
    if name == "*" || hops > 8 {
        return Some((module, name.clone()));
    }
    // A name the module re-exports rather than defines: the module it comes from.
    let reading = readings.get(&module)?;
    if !reading.defines.contains(name) {
        for (exported, source) in &reading.reexports {
            let via: Vec<String> = if exported == name {
                source.clone()
            } else if exported == "*" {
                let mut via = source.clone();
                *via.last_mut()? = name.clone();
                via
            } else {
                continue;
            };
            if let Some((target, taken)) = resolve(&module, 0, &via, readings, hops + 1) {
                let defined_there = readings
                    .get(&target)
                    .is_some_and(|r| r.defines.contains(&taken) || exported == name);
                if defined_there && target != module {
                    return Some((target, taken));
                }
            }
        }
    }
    Some((module, name.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate from (module path, text) pairs, as `read_tree` gives one.
    fn crate_of(modules: &[(&str, &str)]) -> Files {
        modules
            .iter()
            .map(|(path, text)| {
                let module: Vec<String> = if path.is_empty() {
                    Vec::new()
                } else {
                    path.split("::").map(str::to_owned).collect()
                };
                (module, (PathBuf::from(path), text.to_string()))
            })
            .collect()
    }

    fn circles_of(modules: &[(&str, &str)]) -> Vec<String> {
        let graph = Graph::of(&crate_of(modules));
        graph.circles().iter().map(|c| graph.describe(c)).collect()
    }

    #[test]
    fn a_circle_between_siblings_is_found_with_what_ties_it() {
        let circles = circles_of(&[
            ("", "mod client; mod view; mod error;"),
            (
                "client",
                "use crate::view::{respond, write_meta};\nuse crate::error::Failure;\npub fn out_arg() {}",
            ),
            ("view", "use crate::client::out_arg;\npub fn respond() {}\npub fn write_meta() {}"),
            ("error", "pub struct Failure;"),
        ]);
        assert_eq!(
            circles,
            vec!["a circle of 2 modules: client, view\n    client -> view: respond, write_meta\n    view -> client: out_arg"]
        );
    }

    #[test]
    fn a_circle_of_three_through_paths_in_code_and_super_is_found() {
        let circles = circles_of(&[
            ("", "mod budget;"),
            ("budget", "mod connection; mod deployment; mod pool;"),
            (
                "budget::connection",
                "fn f() { super::deployment::node_settings(); }",
            ),
            (
                "budget::deployment",
                "use super::pool::Pooled; pub fn node_settings() {}",
            ),
            (
                "budget::pool",
                "pub struct Pooled(crate::budget::connection::Connection);",
            ),
        ]);
        assert_eq!(circles.len(), 1, "{circles:?}");
        assert!(circles[0].starts_with(
            "a circle of 3 modules: budget::connection, budget::deployment, budget::pool"
        ));
    }

    #[test]
    fn the_layers_after_a_move_pass() {
        // The helper moved below both of its users: arrows one way.
        let circles = circles_of(&[
            ("", "mod boundary; mod client; mod view;"),
            ("boundary", "pub fn out_arg() {}"),
            (
                "client",
                "use crate::boundary::out_arg;\nuse crate::view::respond;",
            ),
            ("view", "use crate::boundary::out_arg;\npub fn respond() {}"),
        ]);
        assert!(circles.is_empty(), "{circles:?}");
    }

    #[test]
    fn a_parent_using_its_children_and_children_using_their_parent_is_no_circle() {
        let circles = circles_of(&[
            ("", "mod budget; pub use budget::*; fn f() { budget::check(); }"),
            (
                "budget",
                "mod connection;\nuse connection::Connection;\npub fn check() {}\npub(crate) fn refused_by_acl() {}",
            ),
            ("budget::connection", "pub struct Connection;\nfn g() { super::refused_by_acl(); crate::budget::check(); }"),
        ]);
        assert!(circles.is_empty(), "{circles:?}");
    }

    #[test]
    fn a_name_taken_through_a_re_export_points_at_the_module_that_defines_it() {
        // `crate::roomchat_client` is lib.rs's glob re-export of client's item, and
        // `super::Job` the parent's explicit one of command's: both are arrows
        // between siblings.
        let circles = circles_of(&[
            (
                "",
                "mod client; mod view; pub use client::*; pub use view::*;",
            ),
            (
                "client",
                "pub struct roomchat_client;\nfn f() { crate::respond(); }",
            ),
            ("view", "use crate::roomchat_client;\npub fn respond() {}"),
        ]);
        assert_eq!(circles.len(), 1, "{circles:?}");
        let circles = circles_of(&[
            ("", "mod export;"),
            (
                "export",
                "mod command; mod commit; pub use command::Job as Job;",
            ),
            (
                "export::command",
                "pub struct Job; fn f() { super::commit::commit(); }",
            ),
            ("export::commit", "use super::Job; pub fn commit() {}"),
        ]);
        assert_eq!(circles.len(), 1, "{circles:?}");
        assert!(circles[0].contains("export::commit -> export::command: Job"));
    }

    #[test]
    fn unit_tests_comments_and_strings_draw_no_arrow() {
        let circles = circles_of(&[
            ("", "mod client; mod view;"),
            ("client", "use crate::view::respond;"),
            (
                "view",
                "pub fn respond() {}\n\
                 // crate::client::gone\n\
                 /* use crate::client::x; */\n\
                 const S: &str = \"crate::client::y\";\n\
                 const R: &str = r#\"crate::client::z\"#;\n\
                 fn l<'a>(c: char) -> bool { c == '\"' }\n\
                 #[cfg(test)]\nmod tests {\n    use crate::client::*;\n    fn f() { crate::client::new(); }\n}\n",
            ),
        ]);
        assert!(circles.is_empty(), "{circles:?}");
    }

    #[test]
    fn use_trees_flatten_with_groups_self_and_aliases() {
        let mut out = Vec::new();
        use_tree(
            &tokens("crate::{a::{self, B as C}, d::*, e}"),
            &[],
            &mut out,
        );
        let got: Vec<(String, Option<String>)> = out
            .into_iter()
            .map(|(p, alias)| (p.join("::"), alias))
            .collect();
        assert_eq!(
            got,
            vec![
                ("crate::a".to_owned(), None),
                ("crate::a::B".to_owned(), Some("C".to_owned())),
                ("crate::d::*".to_owned(), None),
                ("crate::e".to_owned(), None),
            ]
        );
    }
}
