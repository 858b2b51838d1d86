//! The kernel crate's layers, checked on its source: every `crate::` path in a file names a module of
//! its own layer or one below, and no files of `src/` name each other in a cycle.
//!
//! The layers, bottom up (docs/DESIGN.md has what each holds): `types`, `simd`, `kernels`, `dispatch`,
//! `walk`, `api`; `lib.rs` sits on top and only declares and re-exports.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, bottom up, by the top-level module that holds each.
const LAYERS: [&str; 6] = ["types", "simd", "kernels", "dispatch", "walk", "api"];

/// One source file: its module path (`["kernels", "filter"]`) and its code without comments or strings.
struct File {
    module: Vec<String>,
    code: String,
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/kernels/filter.rs` → `kernels::filter`; `mod.rs` names its folder; `lib.rs` is the root.
fn module_of(src: &Path, path: &Path) -> Vec<String> {
    let relative = path.strip_prefix(src).unwrap().with_extension("");
    let mut module: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
        module.pop();
    }
    module
}

/// The code with comments, string and char literals blanked out (doc links are not imports).
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').map_or(text.len(), |n| i + n);
            i = end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(text.len(), |n| i + n + 2);
            i = end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].bytes().take_while(|&b| b == b'#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            let end = rest[body..]
                .find(&close)
                .map_or(text.len(), |n| i + body + n + close.len());
            out.push_str("\"\"");
            i = end;
        } else if bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = j + 1;
        } else if bytes[i] == b'\'' && rest.len() > 2 && (rest.as_bytes()[2] == b'\'' || rest.as_bytes()[1] == b'\\') {
            // A char literal ('x' or '\n'); lifetimes ('a) are left alone.
            let end = rest[1..].find('\'').map_or(text.len(), |n| i + n + 2);
            out.push_str("' '");
            i = end;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Every module path the code names from the crate root: `crate::a::b::C`, `$crate::a::b`, and each
/// path of a `use crate::{a::b, c}` group, as lists of identifiers.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut at = 0;
    while let Some(found) = code[at..].find("crate::") {
        let start = at + found;
        at = start + "crate::".len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let mut found_paths = Vec::new();
        expand(&code[at..], Vec::new(), &mut found_paths);
        if before == Some('$') {
            // `$crate::` in a macro: marked, so that a public name it reaches is told apart.
            for path in &mut found_paths {
                if let Some(first) = path.first_mut() {
                    first.insert(0, '$');
                }
            }
        }
        paths.extend(found_paths);
    }
    paths
}

/// Reads one path (or a `{...}` group of them) from the start of `rest`, after `prefix`.
fn expand(rest: &str, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let bytes = rest.as_bytes();
    let mut i = 0;
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'{' {
            i += 1;
            loop {
                while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b',') {
                    i += 1;
                }
                if i >= bytes.len() || bytes[i] == b'}' {
                    out.push(prefix.clone());
                    return i + 1;
                }
                i += expand(&rest[i..], prefix.clone(), out);
            }
        }
        let ident: String = rest[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if ident.is_empty() {
            out.push(prefix);
            return i;
        }
        i += ident.len();
        prefix.push(ident);
        if rest[i..].starts_with("::") {
            i += 2;
        } else {
            out.push(prefix);
            return i;
        }
    }
}

/// The byte ranges of the inline modules (`mod tests { .. }`) in `code`: `super` inside one names the
/// file's module, not its parent.
fn inline_modules(code: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut at = 0;
    while let Some(found) = code[at..].find("mod ") {
        let start = at + found;
        at = start + 4;
        if code[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &code[at..];
        let name_len = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').count();
        let after = rest[name_len..].trim_start();
        if name_len == 0 || !after.starts_with('{') {
            continue;
        }
        let open = at + name_len + (rest[name_len..].len() - after.len());
        let mut depth = 0usize;
        for (offset, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        ranges.push(open..open + offset);
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    ranges
}

fn layer(module: &[String]) -> Option<usize> {
    let top = module.first()?;
    LAYERS.iter().position(|layer| layer == top)
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    source_files(&src, &mut paths);
    let files: Vec<File> = paths
        .iter()
        .map(|path| File {
            module: module_of(&src, path),
            code: code_only(&fs::read_to_string(path).unwrap()),
        })
        .collect();
    for file in &files {
        if file.module.is_empty() {
            continue; // lib.rs: declares and re-exports every layer
        }
        let own = layer(&file.module).unwrap_or_else(|| {
            panic!(
                "src/{} is in no layer: put it under one of {LAYERS:?}",
                file.module.join("/")
            )
        });
        for mut path in crate_paths(&file.code) {
            let from_macro = path.first().is_some_and(|name| name.starts_with('$'));
            if let Some(first) = path.first_mut() {
                first.retain(|c| c != '$');
            }
            if let Some(target) = layer(&path) {
                assert!(
                    target <= own,
                    "{} (layer {own}, {}) uses crate::{} (layer {target}, {}), a layer above its own",
                    file.module.join("::"),
                    LAYERS[own],
                    path.join("::"),
                    LAYERS[target]
                );
            } else if from_macro {
                // `$crate::Name` in an exported macro: the caller's path to a public name.
            } else {
                // A name the crate root re-exports: the root sits above every layer.
                panic!(
                    "{} uses crate::{}, a name of the crate root: name the layer's module instead",
                    file.module.join("::"),
                    path.join("::")
                );
            }
        }
    }
}

#[test]
fn no_files_import_each_other_in_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    source_files(&src, &mut paths);
    let files: Vec<File> = paths
        .iter()
        .map(|path| File {
            module: module_of(&src, path),
            code: code_only(&fs::read_to_string(path).unwrap()),
        })
        .collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    // The file a path lands in: its longest prefix that is a module.
    let file_of = |path: &[String]| -> Option<Vec<String>> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| modules.contains(m))
    };
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in files.iter().filter(|f| !f.module.is_empty()) {
        let mut targets = BTreeSet::new();
        for mut path in crate_paths(&file.code) {
            if let Some(first) = path.first_mut() {
                first.retain(|c| c != '$');
            }
            if let Some(target) = file_of(&path) {
                targets.insert(target);
            }
        }
        // `super::x` and `self::x` within the file's own folder.
        let inline = inline_modules(&file.code);
        for (keyword, up) in [("super::", 1usize), ("self::", 0)] {
            let mut at = 0;
            while let Some(found) = file.code[at..].find(keyword) {
                let start = at + found;
                at = start + keyword.len();
                if file.code[..start]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                {
                    continue;
                }
                // `self` is the file's own module, `super` its parent (a folder's `mod.rs` is the folder),
                // each one level less inside an inline module.
                let nesting = inline.iter().filter(|range| range.contains(&start)).count();
                let mut base = file.module.clone();
                for _ in 0..up.saturating_sub(nesting).min(base.len()) {
                    base.pop();
                }
                let mut found_paths = Vec::new();
                expand(&file.code[at..], base, &mut found_paths);
                for path in found_paths {
                    if let Some(target) = file_of(&path) {
                        targets.insert(target);
                    }
                }
            }
        }
        // `child::x` (a `use` or a path) from a folder's `mod.rs` into one of its own files.
        for module in &modules {
            let Some((child, parent)) = module.split_last() else {
                continue;
            };
            if parent != file.module.as_slice() {
                continue;
            }
            let needle = format!("{child}::");
            let mut at = 0;
            while let Some(found) = file.code[at..].find(&needle) {
                let start = at + found;
                at = start + needle.len();
                let before = file.code[..start].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$') {
                    continue;
                }
                let mut found_paths = Vec::new();
                expand(&file.code[at..], module.clone(), &mut found_paths);
                for path in found_paths {
                    if let Some(target) = file_of(&path) {
                        targets.insert(target);
                    }
                }
            }
        }
        targets.retain(|t| t != &file.module && !t.is_empty());
        edges.insert(file.module.clone(), targets);
    }
    // Depth-first search for a back edge.
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                0 => visit(next, edges, state, stack),
                1 => {
                    let from = stack.iter().position(|n| n == next).unwrap();
                    let cycle: Vec<String> = stack[from..].iter().chain([next]).map(|m| m.join("::")).collect();
                    panic!("modules import each other in a cycle: {}", cycle.join(" -> "));
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if !state.contains_key(node) {
            visit(node, &edges, &mut state, &mut Vec::new());
        }
    }
}
