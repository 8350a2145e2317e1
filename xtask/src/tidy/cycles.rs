//! The module-cycle rule of tidy: inside a crate, the modules of one folder (the children of
//! one module) must depend on each other one way only. A reference from module `a` to an item
//! of its sibling `b` (`use crate::b::…`, `crate::b::x` in code, `super::b::…`, `self::…`,
//! a path through a `pub use` re-export) is an edge `a -> b`; any cycle among siblings is
//! reported with its modules and, for each edge, the first line that makes it.
//!
//! The module tree comes from the `mod name;` declarations (with `#[path]`) and inline
//! `mod name { … }` blocks of the crate's root files (`src/lib.rs`, `src/main.rs`,
//! `tests/tests.rs`). A reference from a module to its own parent or child is no edge: only
//! siblings can form a cycle that a reader has to untangle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module path from the crate root (`[]` is the root).
type ModPath = Vec<String>;

/// One parsed crate: its modules and the references between them.
#[derive(Default)]
struct CrateTree {
    /// Every module, from its path.
    modules: BTreeSet<ModPath>,
    /// `pub use` re-exports: (module, name) -> the absolute path it stands for.
    reexports: BTreeMap<(ModPath, String), ModPath>,
    /// (from module, absolute target path, where: `file:line`).
    refs: Vec<(ModPath, ModPath, String)>,
}

/// Checks every crate under `crates/`, and `xtask/`, and returns one problem per cycle.
pub(crate) fn check(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut crate_dirs = vec![root.join("xtask")];
    if let Ok(entries) = std::fs::read_dir(root.join("crates")) {
        for entry in entries {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                crate_dirs.push(entry.path());
            }
        }
    }
    crate_dirs.sort();
    let mut problems = Vec::new();
    for dir in crate_dirs {
        for rel_root in ["src/lib.rs", "src/main.rs", "tests/tests.rs"] {
            let file = dir.join(rel_root);
            if !file.is_file() {
                continue;
            }
            let name = dir
                .strip_prefix(root)
                .unwrap_or(&dir)
                .join(rel_root)
                .display()
                .to_string();
            problems.extend(
                crate_cycles(&file, root)?
                    .into_iter()
                    .map(|c| format!("{name}: {c}")),
            );
        }
    }
    Ok(problems)
}

/// The module cycles of the crate whose root file is `root_file` (paths in messages are shown
/// relative to `shown_from`).
fn crate_cycles(root_file: &Path, shown_from: &Path) -> anyhow::Result<Vec<String>> {
    let mut tree = CrateTree::default();
    tree.modules.insert(Vec::new());
    load_module(&mut tree, root_file, Vec::new(), true, shown_from)?;
    Ok(find_cycles(&tree))
}

/// Reads the file of module `path` (`mod_rs`: a `lib.rs`, `main.rs` or `mod.rs`, whose child
/// files sit beside it) and, recursively, its child modules.
fn load_module(
    tree: &mut CrateTree,
    file: &Path,
    path: ModPath,
    mod_rs: bool,
    shown_from: &Path,
) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    let shown = file
        .strip_prefix(shown_from)
        .unwrap_or(file)
        .display()
        .to_string();
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    // Children of this file live in `dir` for mod-rs files, else in `dir/<stem>`.
    let child_dir = if mod_rs {
        dir.clone()
    } else {
        dir.join(file.file_stem().unwrap_or_default())
    };
    let code = strip_comments_and_strings(&text);
    // Inline modules open with `mod name {`: (module path, brace depth inside it).
    let mut inline: Vec<(ModPath, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_path: Option<String> = None;
    let mut statement = String::new();
    let mut statement_line = 0usize;
    for (i, (line, raw)) in code.lines().zip(text.lines()).enumerate() {
        let here = inline.last().map_or(&path, |(p, _)| p).clone();
        let trimmed = line.trim();
        if let Some(p) = path_attribute(raw) {
            pending_path = Some(p);
        }
        if let Some((name, is_inline)) = mod_declaration(trimmed) {
            let mut child = here.clone();
            child.push(name.clone());
            tree.modules.insert(child.clone());
            if is_inline {
                inline.push((child, depth + 1));
            } else if inline.is_empty() {
                let (child_file, child_mod_rs) = match pending_path.take() {
                    Some(p) => {
                        let f = dir.join(&p);
                        let is_mod_rs = f.file_name().is_some_and(|n| n == "mod.rs");
                        (f, is_mod_rs)
                    }
                    None => {
                        let flat = child_dir.join(format!("{name}.rs"));
                        if flat.is_file() {
                            (flat, false)
                        } else {
                            (child_dir.join(&name).join("mod.rs"), true)
                        }
                    }
                };
                if child_file.is_file() {
                    load_module(tree, &child_file, child, child_mod_rs, shown_from)?;
                }
            }
        } else if !trimmed.starts_with("#[") {
            pending_path = None;
        }
        let at = format!("{shown}:{}", i + 1);
        // `use` statements may span lines: gather them up to the `;`.
        if statement.is_empty() {
            if let Some(rest) = use_start(trimmed) {
                statement = rest.to_string();
                statement_line = i + 1;
            }
        } else {
            statement.push(' ');
            statement.push_str(trimmed);
        }
        if !statement.is_empty() && statement.contains(';') {
            let body = statement.split(';').next().unwrap_or_default().to_string();
            let is_pub = trimmed_use_is_pub(&text, statement_line);
            let where_ = format!("{shown}:{statement_line}");
            for (target, alias) in use_tree_paths(&body) {
                if let Some(abs) = resolve(&here, &target, &tree.modules) {
                    if is_pub && let Some(alias) = alias {
                        tree.reexports.insert((here.clone(), alias), abs.clone());
                    }
                    tree.refs.push((here.clone(), abs, where_.clone()));
                }
            }
            statement.clear();
        } else if statement.is_empty() {
            for target in inline_paths(line) {
                if let Some(abs) = resolve(&here, &target, &tree.modules) {
                    tree.refs.push((here.clone(), abs, at.clone()));
                }
            }
        }
        for c in line.chars() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    while inline.last().is_some_and(|(_, d)| *d > depth) {
                        inline.pop();
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// True when the `use` statement starting at line `line` (1-based) of `text` is `pub` (at any
/// visibility: `pub(crate) use` re-exports inside the crate too).
fn trimmed_use_is_pub(text: &str, line: usize) -> bool {
    text.lines()
        .nth(line.wrapping_sub(1))
        .is_some_and(|l| l.trim_start().starts_with("pub"))
}

/// `#[path = "x"]` on this line: the path.
fn path_attribute(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("#[path")?;
    let start = rest.find('"')? + 1;
    let end = start + rest[start..].find('"')?;
    Some(rest[start..end].to_string())
}

/// `mod name;` (false) or `mod name {` (true), with any visibility.
fn mod_declaration(line: &str) -> Option<(String, bool)> {
    let rest = strip_visibility(line).strip_prefix("mod ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let after = rest[name.len()..].trim();
    if name.is_empty() {
        return None;
    }
    match after.chars().next() {
        Some(';') => Some((name, false)),
        Some('{') => Some((name, true)),
        _ => None,
    }
}

/// `line` without a leading `pub`, `pub(crate)`, `pub(super)` or `pub(in …)`.
fn strip_visibility(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("pub") else {
        return line;
    };
    let rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('(') {
        match inner.find(')') {
            Some(end) => inner[end + 1..].trim_start(),
            None => line,
        }
    } else {
        rest
    }
}

/// The text after `use ` when the line opens a `use` statement.
fn use_start(line: &str) -> Option<&str> {
    strip_visibility(line).strip_prefix("use ")
}

/// The paths a use tree names (`a::{b, c::{d as e}, f::*}` gives `a::b`, `a::c::d`, `a::f`),
/// each with the name it is imported under (none for globs).
fn use_tree_paths(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    let tree: String = tree
        .chars()
        .filter(|c| !c.is_whitespace() || *c == ' ')
        .collect();
    let mut out = Vec::new();
    expand(tree.trim(), &mut Vec::new(), &mut out);
    out
}

fn expand(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let tree = tree.trim().trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let close = tree.rfind('}').unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let added = push_segments(head, prefix);
        for part in split_top_level(inner) {
            expand(part, prefix, out);
        }
        prefix.truncate(prefix.len() - added);
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p.trim(), Some(a.trim().to_string())),
        None => (tree, None),
    };
    if path.is_empty() {
        return;
    }
    let added = push_segments(path, prefix);
    let mut full = prefix.clone();
    prefix.truncate(prefix.len() - added);
    match full.last().map(String::as_str) {
        Some("*") => {
            full.pop();
            out.push((full, None));
        }
        Some("self") => {
            full.pop();
            let name = alias.or_else(|| full.last().cloned());
            out.push((full, name));
        }
        Some(last) => {
            let name = alias.unwrap_or_else(|| last.to_string());
            out.push((full, Some(name)));
        }
        None => {}
    }
}

/// Appends the `::`-separated segments of `path` to `prefix`; returns how many.
fn push_segments(path: &str, prefix: &mut Vec<String>) -> usize {
    let mut n = 0;
    for seg in path.split("::").map(str::trim).filter(|s| !s.is_empty()) {
        prefix.push(seg.to_string());
        n += 1;
    }
    n
}

/// The comma-separated parts of a brace list, not splitting inside nested braces.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// The `crate::…`, `super::…` and `self::…` paths written in a line of code.
fn inline_paths(line: &str) -> Vec<Vec<String>> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    for start_word in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(found) = line[from..].find(start_word) {
            let at = from + found;
            from = at + start_word.len();
            // Only at a word start (not `my_crate::` or `$crate::`).
            if at > 0
                && (bytes[at - 1].is_ascii_alphanumeric()
                    || matches!(bytes[at - 1], b'_' | b'$' | b':'))
            {
                continue;
            }
            let path: String = line[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            out.push(
                path.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            );
        }
    }
    out
}

/// The absolute path `target` (as written in module `here`) stands for, when it starts with
/// `crate`, `super` or `self`, or names a known child module of `here`.
fn resolve(here: &ModPath, target: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    let mut abs: ModPath;
    let mut rest = target;
    match target.first().map(String::as_str) {
        Some("crate") => {
            abs = Vec::new();
            rest = &target[1..];
        }
        Some("super") | Some("self") => {
            abs = here.clone();
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        abs.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = here.clone();
            child.push(first.to_string());
            if !modules.contains(&child) {
                return None;
            }
            abs = here.clone();
        }
        None => return None,
    }
    abs.extend(rest.iter().cloned());
    Some(abs)
}

/// The module an absolute path lands in, following `pub use` re-exports: its longest prefix
/// that is a module.
fn target_module(tree: &CrateTree, path: &[String]) -> ModPath {
    let mut path = path.to_vec();
    for _ in 0..8 {
        let mut module: ModPath = Vec::new();
        let mut redirected = false;
        for (i, seg) in path.iter().enumerate() {
            let mut next = module.clone();
            next.push(seg.clone());
            if tree.modules.contains(&next) {
                module = next;
                continue;
            }
            if let Some(to) = tree.reexports.get(&(module.clone(), seg.clone())) {
                let mut new_path = to.clone();
                new_path.extend(path[i + 1..].iter().cloned());
                if new_path != path {
                    path = new_path;
                    redirected = true;
                }
            }
            break;
        }
        if !redirected {
            return module;
        }
    }
    path
}

/// One message per cycle among the children of one module.
fn find_cycles(tree: &CrateTree) -> Vec<String> {
    // (parent) -> (from child -> (to child -> first place)).
    let mut graphs: BTreeMap<ModPath, BTreeMap<String, BTreeMap<String, String>>> = BTreeMap::new();
    for (from, to, at) in &tree.refs {
        let to = target_module(tree, to);
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common < from.len() && common < to.len() {
            graphs
                .entry(from[..common].to_vec())
                .or_default()
                .entry(from[common].clone())
                .or_default()
                .entry(to[common].clone())
                .or_insert_with(|| at.clone());
        }
    }
    let mut out = Vec::new();
    for (parent, graph) in &graphs {
        let parent_name = if parent.is_empty() {
            "crate".to_string()
        } else {
            format!("crate::{}", parent.join("::"))
        };
        let mut reported: BTreeSet<BTreeSet<String>> = BTreeSet::new();
        for start in graph.keys() {
            if let Some(cycle) = cycle_from(graph, start) {
                let members: BTreeSet<String> = cycle.iter().cloned().collect();
                if !reported.insert(members) {
                    continue;
                }
                let steps: Vec<String> = cycle
                    .iter()
                    .zip(cycle.iter().cycle().skip(1))
                    .map(|(a, b)| format!("{a} -> {b} ({})", graph[a][b]))
                    .collect();
                out.push(format!(
                    "module cycle in {parent_name}: {}",
                    steps.join(", ")
                ));
            }
        }
    }
    out
}

/// The shortest cycle through `start`, as its modules in order, if there is one.
fn cycle_from(
    graph: &BTreeMap<String, BTreeMap<String, String>>,
    start: &str,
) -> Option<Vec<String>> {
    let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(node).into_iter().flat_map(|m| m.keys()) {
            if next == start {
                let mut cycle = vec![node.to_string()];
                let mut at = node;
                while at != start {
                    at = previous[at];
                    cycle.push(at.to_string());
                }
                cycle.reverse();
                return Some(cycle);
            }
            if !previous.contains_key(next.as_str()) {
                previous.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    None
}

/// `text` with comments and the contents of string and character literals blanked out (line
/// structure kept), so that paths are only found in code.
fn strip_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            out.push('"');
            i += 1;
        } else if c == 'r' && next == Some('#') && chars.get(i + 2) == Some(&'"') {
            // r#"..."# raw strings (the one raw form the tree uses).
            i += 3;
            while i < chars.len() && !(chars[i] == '"' && chars.get(i + 1) == Some(&'#')) {
                if chars[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            out.push_str("\"\"");
            i += 2;
        } else if c == '\'' && next.is_some() && chars.get(i + 2) == Some(&'\'') {
            // A one-character literal such as '{' (lifetimes have no closing quote).
            out.push_str("' '");
            i += 3;
        } else if c == '\'' && next == Some('\\') {
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            out.push_str("' '");
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Writes a fake crate of `files` (relative path, text) under a temp dir and returns the
/// cycles found from its `src/lib.rs`.
#[cfg(test)]
fn cycles_of(files: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    crate_cycles(&dir.path().join("src/lib.rs"), dir.path()).expect("parse")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_between_two_files_is_reported_with_its_path() {
        let found = cycles_of(&[
            ("src/lib.rs", "//! x\nmod a;\nmod b;\nmod c;\n"),
            ("src/a.rs", "//! a\nuse crate::b::B;\npub struct A;\n"),
            (
                "src/b.rs",
                "//! b\nuse crate::{c::{self, C}};\npub struct B;\n",
            ),
            (
                "src/c.rs",
                "//! c\npub struct C;\nfn f() -> super::a::A { todo!() }\n",
            ),
        ]);
        assert_eq!(
            found,
            [
                "module cycle in crate: a -> b (src/a.rs:2), b -> c (src/b.rs:2), c -> a (src/c.rs:3)"
            ]
        );
    }

    #[test]
    fn a_dag_parents_children_and_comments_pass() {
        let found = cycles_of(&[
            (
                "src/lib.rs",
                "//! x\npub mod fmt;\nmod low;\npub use fmt::csv;\n// crate::fmt::csv is fine\n",
            ),
            (
                "src/low.rs",
                "//! low: uses its parent only\nuse crate::Thing;\n",
            ),
            (
                "src/fmt/mod.rs",
                "//! fmt\npub mod csv;\nmod json;\nuse json::J;\n",
            ),
            (
                "src/fmt/csv.rs",
                "//! csv\nuse super::json::J;\nuse crate::low;\n/// crate::fmt::json (a comment)\nconst S: &str = \"crate::fmt\";\n",
            ),
            (
                "src/fmt/json.rs",
                "//! json\npub struct J;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
            ),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn cycles_through_reexports_and_nested_folders_are_found() {
        let found = cycles_of(&[
            (
                "src/lib.rs",
                "//! x\nmod text;\nmod simd;\npub use simd::Window;\n",
            ),
            (
                "src/simd/mod.rs",
                "//! s\nmod avx2;\nmod avx512;\npub(crate) use avx2::Window;\n",
            ),
            (
                "src/simd/avx2.rs",
                "//! a\npub struct Window;\nfn f() { super::avx512::g() }\n",
            ),
            (
                "src/simd/avx512.rs",
                "//! b\npub fn g() {}\nuse crate::Window;\n",
            ),
            ("src/text.rs", "//! t\nuse crate::Window as W;\n"),
        ]);
        assert_eq!(
            found,
            [
                "module cycle in crate::simd: avx2 -> avx512 (src/simd/avx2.rs:3), avx512 -> avx2 (src/simd/avx512.rs:3)"
            ]
        );
    }
}
