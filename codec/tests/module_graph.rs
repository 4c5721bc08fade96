//! The codec's module graph (issue 8, "one home for every concept"): views and the decoder never
//! import the builders, and no two modules depend on each other, directly or in a ring.
//!
//! The test reads `codec/src/**/*.rs` (comments, strings and character literals removed) and
//! collects every path that starts with `crate::`, `$crate::`, `super::` or `self::`, `use`
//! trees included, as an arrow from the file's module to the module the path names (the
//! longest module prefix of the path; `crate::Name` is looked up in `lib.rs`'s re-exports).
//! Then:
//!
//! - (a) nothing outside `build` names `build` (the builders import the views, never the
//!   reverse);
//! - (b) the top-level modules (`ib`, `ext`, `frame`, `decoder`, …, each with all its files)
//!   form no cycle;
//! - (c) inside each directory module (`ib`, `ext`, `decoder`, `build`, `layout`) the files
//!   form no cycle either (arrows to the directory's own `mod.rs`, which declares and
//!   dispatches to its files, are left out: sharing a parent's item is not a cycle).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Directory modules whose files are checked among themselves (c).
const DIRECTORIES: &[&str] = &["ib", "ext", "decoder", "build", "layout"];

/// One source file: its module path (`ib::bth`; `""` for `lib.rs`) and its text.
struct Source {
    module: String,
    file: String,
    text: String,
}

fn sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
                parts.pop();
            }
            Source {
                module: parts.join("::"),
                file: format!("codec/src/{}", p.strip_prefix(&src).unwrap().display()),
                text: std::fs::read_to_string(&p).unwrap(),
            }
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text without comments, string literals and character literals (each replaced by a
/// space, so tokens stay apart).
fn strip(s: &str) -> String {
    let c: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        match c[i] {
            '/' if at(i + 1) == '/' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == '*' => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                out.push(' ');
            }
            'r' | 'b' if !is_ident(at(i.wrapping_sub(1))) && raw_string_start(&c, i).is_some() => {
                let (hashes, body) = raw_string_start(&c, i).unwrap();
                i = body;
                loop {
                    if i >= c.len() {
                        break;
                    }
                    if c[i] == '"' && (0..hashes).all(|k| at(i + 1 + k) == '#') {
                        i += 1 + hashes;
                        break;
                    }
                    i += 1;
                }
                out.push(' ');
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    i += if c[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push(' ');
            }
            '\'' if at(i + 1) == '\\' => {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push(' ');
            }
            '\'' if at(i + 2) == '\'' => {
                i += 3;
                out.push(' ');
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `r"`, `r#"`, `br"`, `br#"` at `i`: the number of hashes and where the body starts.
fn raw_string_start(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut k = i;
    if c.get(k) == Some(&'b') {
        k += 1;
    }
    if c.get(k) != Some(&'r') {
        return None;
    }
    k += 1;
    let mut hashes = 0;
    while c.get(k) == Some(&'#') {
        hashes += 1;
        k += 1;
    }
    (c.get(k) == Some(&'"')).then_some((hashes, k + 1))
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

fn tokens(s: &str) -> Vec<Tok> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if is_ident(ch) || (ch == '$' && c.get(i + 1).is_some_and(|&n| is_ident(n))) {
            let start = i;
            i += 1;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push(Tok::PathSep);
            i += 2;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

/// A path a file names, as written (`crate::ib::Hdr`, `super::Ctx`), with the module it was
/// written in (the file's, or an inline `mod` inside it).
#[derive(Clone, Debug)]
struct Mention {
    inside: Vec<String>,
    path: Vec<String>,
}

/// Every `crate::`/`$crate::`/`super::`/`self::` path of a file, use trees expanded.
fn mentions(module: &str, text: &str) -> Vec<Mention> {
    let toks = tokens(&strip(text));
    let base: Vec<String> = if module.is_empty() { vec![] } else { module.split("::").map(String::from).collect() };
    let mut inline: Vec<(String, usize)> = Vec::new(); // inline modules with the depth they opened at
    let mut depth = 0usize;
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Tok::Ident(kw) if kw == "mod" => {
                if let (Some(Tok::Ident(name)), Some(Tok::Punct('{'))) = (toks.get(i + 1), toks.get(i + 2)) {
                    inline.push((name.clone(), depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Tok::Ident(first)
                if matches!(first.as_str(), "crate" | "$crate" | "super" | "self")
                    && toks.get(i + 1) == Some(&Tok::PathSep)
                    && !matches!(toks.get(i.wrapping_sub(1)), Some(Tok::PathSep)) =>
            {
                let inside: Vec<String> = base.iter().cloned().chain(inline.iter().map(|(n, _)| n.clone())).collect();
                let mut paths = Vec::new();
                i = use_tree(&toks, i, Vec::new(), &mut paths);
                for path in paths {
                    out.push(Mention { inside: inside.clone(), path });
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Reads a path or use tree starting at `toks[i]` with `prefix` before it; pushes each full
/// path; returns the index after it.
fn use_tree(toks: &[Tok], mut i: usize, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    loop {
        match toks.get(i) {
            Some(Tok::Ident(seg)) => {
                prefix.push(seg.clone());
                i += 1;
                if toks.get(i) == Some(&Tok::PathSep) {
                    i += 1;
                    continue;
                }
                out.push(prefix);
                return i;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                loop {
                    match toks.get(i) {
                        Some(Tok::Punct('}')) => return i + 1,
                        Some(Tok::Punct(',')) => i += 1,
                        Some(Tok::Punct('*')) => {
                            out.push(prefix.clone());
                            i += 1;
                        }
                        Some(_) => i = use_tree(toks, i, prefix.clone(), out),
                        None => return i,
                    }
                }
            }
            Some(Tok::Punct('*')) => {
                out.push(prefix);
                return i + 1;
            }
            _ => {
                out.push(prefix);
                return i;
            }
        }
    }
}

/// The module a mention names: its absolute path cut to the longest known module.
fn resolve(m: &Mention, modules: &BTreeSet<String>, root_exports: &BTreeMap<String, String>) -> Option<String> {
    let mut abs: Vec<String> = Vec::new();
    let mut segs = m.path.iter().peekable();
    match segs.peek().map(|s| s.as_str()) {
        Some("crate" | "$crate") => {
            segs.next();
        }
        Some("super" | "self") => {
            abs = m.inside.clone();
            while let Some(s) = segs.peek() {
                match s.as_str() {
                    "super" => {
                        abs.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                segs.next();
            }
        }
        _ => return None,
    }
    abs.extend(segs.cloned());
    let mut best = None;
    for n in 0..=abs.len() {
        let cand = abs[..n].join("::");
        if modules.contains(&cand) {
            best = Some(cand);
        }
    }
    match best.as_deref() {
        // `crate::Name`: the module `lib.rs` re-exports it from.
        Some("") => abs.first().and_then(|name| root_exports.get(name).cloned()).or(Some(String::new())),
        _ => best,
    }
}

/// `pub use a::b::{X, Y};` in `lib.rs`: X and Y come from `a`.
fn root_exports(lib: &str) -> BTreeMap<String, String> {
    let toks = tokens(&strip(lib));
    let mut map = BTreeMap::new();
    for i in 2..toks.len() {
        if let [Tok::Ident(p), Tok::Ident(u), Tok::Ident(first)] = &toks[i - 2..=i] {
            if p == "pub" && u == "use" {
                let mut paths = Vec::new();
                use_tree(&toks, i, Vec::new(), &mut paths);
                for path in paths {
                    if let Some(last) = path.last() {
                        map.insert(last.clone(), first.clone());
                    }
                }
            }
        }
    }
    map
}

/// An arrow between modules and where it was seen.
type Arrows = BTreeMap<(String, String), BTreeSet<String>>;

fn arrows() -> (Arrows, BTreeSet<String>) {
    let srcs = sources();
    let modules: BTreeSet<String> = srcs.iter().map(|s| s.module.clone()).collect();
    let lib = srcs.iter().find(|s| s.module.is_empty()).expect("lib.rs");
    let exports = root_exports(&lib.text);
    let mut arrows = Arrows::new();
    for s in &srcs {
        for m in mentions(&s.module, &s.text) {
            if let Some(to) = resolve(&m, &modules, &exports) {
                if to != s.module && !s.module.is_empty() && !to.is_empty() {
                    arrows.entry((s.module.clone(), to)).or_default().insert(format!("{}: {}", s.file, m.path.join("::")));
                }
            }
        }
    }
    (arrows, modules)
}

fn top(m: &str) -> &str {
    m.split("::").next().unwrap()
}

/// The strongly connected components of more than one node (Tarjan).
fn cycles(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.iter().flat_map(|(a, b)| [a, b]).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let idx = |n: &String| nodes.iter().position(|m| *m == n).unwrap();
    let mut adj = vec![Vec::new(); nodes.len()];
    for (a, b) in edges {
        adj[idx(a)].push(idx(b));
    }
    struct T<'a> {
        adj: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T<'_>, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in &t.adj[v] {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let n = nodes.len();
    let mut t = T { adj: &adj, index: vec![None; n], low: vec![0; n], on: vec![false; n], stack: vec![], next: 0, out: vec![] };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
        .into_iter()
        .map(|c| {
            let mut names: Vec<String> = c.into_iter().map(|i| nodes[i].clone()).collect();
            names.sort();
            names
        })
        .collect()
}

/// Describes each cycle with the arrows inside it and where they come from.
fn explain(cyc: &[Vec<String>], arrows: &Arrows, project: impl Fn(&str) -> String) -> String {
    let mut s = String::new();
    for c in cyc {
        s.push_str(&format!("cycle among {{{}}}:\n", c.join(", ")));
        for ((from, to), seen) in arrows {
            let (pf, pt) = (project(from), project(to));
            if pf != pt && c.contains(&pf) && c.contains(&pt) {
                let first: Vec<&String> = seen.iter().take(2).collect();
                s.push_str(&format!("  {pf} -> {pt}   ({from} -> {to}: {})\n", first.iter().map(|x| x.as_str()).collect::<Vec<_>>().join("; ")));
            }
        }
    }
    s
}

#[test]
fn nothing_outside_build_imports_build() {
    let (arrows, _) = arrows();
    let bad: Vec<String> = arrows
        .iter()
        .filter(|((from, to), _)| top(to) == "build" && top(from) != "build")
        .flat_map(|(_, seen)| seen.iter().cloned())
        .collect();
    assert!(bad.is_empty(), "the builders are imported from outside build:\n  {}", bad.join("\n  "));
}

#[test]
fn top_level_modules_form_no_cycle() {
    let (arrows, _) = arrows();
    let edges: BTreeSet<(String, String)> =
        arrows.keys().map(|(a, b)| (top(a).to_string(), top(b).to_string())).filter(|(a, b)| a != b).collect();
    let cyc = cycles(&edges);
    assert!(cyc.is_empty(), "{}", explain(&cyc, &arrows, |m| top(m).to_string()));
}

#[test]
fn files_of_each_directory_module_form_no_cycle() {
    let (arrows, modules) = arrows();
    let mut report = String::new();
    assert!(modules.contains("ib") && modules.contains("ext"), "the codec's modules were not found");
    for dir in DIRECTORIES.iter().filter(|d| modules.contains(**d)) {
        // A file's module inside `dir` (`ext::sdr` for `ext::sdr`), None for `dir` itself.
        let child = |m: &str| -> Option<String> {
            let rest = m.strip_prefix(dir)?.strip_prefix("::")?;
            Some(format!("{dir}::{}", rest.split("::").next().unwrap()))
        };
        let edges: BTreeSet<(String, String)> = arrows
            .keys()
            .filter_map(|(a, b)| Some((child(a)?, child(b)?)))
            .filter(|(a, b)| a != b)
            .collect();
        let cyc = cycles(&edges);
        if !cyc.is_empty() {
            report.push_str(&explain(&cyc, &arrows, |m| child(m).unwrap_or_default()));
        }
    }
    assert!(report.is_empty(), "{report}");
}

#[test]
fn the_reader_sees_paths_and_use_trees() {
    let m = mentions(
        "ext::sdr",
        "use crate::ext::{self, erd::{Nack, x}, Ctx}; // crate::build::Nope\n\
         fn f() { let s = \"crate::build::Nope\"; super::Ctx::new(); $crate::ib::bytes::get(b); }\n\
         #[cfg(test)] mod tests { use super::*; }",
    );
    let paths: Vec<(String, String)> = m.iter().map(|m| (m.inside.join("::"), m.path.join("::"))).collect();
    let want = [
        ("ext::sdr", "crate::ext::self"),
        ("ext::sdr", "crate::ext::erd::Nack"),
        ("ext::sdr", "crate::ext::erd::x"),
        ("ext::sdr", "crate::ext::Ctx"),
        ("ext::sdr", "super::Ctx::new"),
        ("ext::sdr", "$crate::ib::bytes::get"),
        ("ext::sdr::tests", "super"),
    ];
    assert_eq!(paths, want.map(|(a, b)| (a.to_string(), b.to_string())));
    let modules: BTreeSet<String> = ["", "ext", "ext::sdr", "ext::erd", "ib", "ib::bytes"].map(String::from).into();
    let resolved: Vec<Option<String>> = m.iter().map(|m| resolve(m, &modules, &BTreeMap::new())).collect();
    let want = ["ext", "ext::erd", "ext::erd", "ext", "ext", "ib::bytes", "ext::sdr"];
    assert_eq!(resolved, want.map(|w| Some(w.to_string())));
}
