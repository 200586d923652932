//! The layering of `src/`: the top-level modules import one another without a cycle, and so do
//! the modules of the three groups (`compile`, `runtime`, `leaves`: each child of a group is a
//! unit of its own, the group's root file another), and so do the files (each by the `crate::`
//! paths it names). Shipped code only; a test module may reach up for fixtures. A failure names
//! each import of the cycle and the files that make it, so the fix (move the type down, or the
//! caller up) is plain.
//!
//! The imports are read from the text: every `crate::NAME` outside comments and outside items
//! under `#[cfg(test)]` (skipped by brace counting; a `#[cfg(test)] mod NAME;` makes that file
//! and the folder under it test-only).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use camino::{Utf8Path, Utf8PathBuf};

fn source_root() -> Utf8PathBuf {
    Utf8PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))
}

fn rust_files(folder: &Utf8Path, files: &mut Vec<Utf8PathBuf>) {
    let mut entries: Vec<Utf8PathBuf> = folder
        .read_dir_utf8()
        .expect("read a source folder")
        .map(|entry| entry.expect("a folder entry").into_path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension() == Some("rs") {
            files.push(path);
        }
    }
}

/// The top-level modules that only group others; each child is a unit of the layering.
const GROUPS: [&str; 3] = ["compile", "runtime", "leaves"];

/// The unit a file of `src/` belongs to: its top-level module (`src/report/sarif.rs` is
/// `report`), or in a group its child (`src/runtime/gate/step/plan.rs` is `runtime::gate`; the
/// group's own file `src/compile.rs` is `compile`).
fn layering_unit(relative: &Utf8Path) -> String {
    let mut components = relative.components().map(|component| component.as_str());
    let first = components.next().expect("a file under src");
    let top = first.strip_suffix(".rs").unwrap_or(first);
    match components.next() {
        Some(second) if GROUPS.contains(&top) => {
            format!("{top}::{}", second.strip_suffix(".rs").unwrap_or(second))
        }
        _ => top.to_owned(),
    }
}

/// The unit a path after `crate::` names (`runtime::gate::report::X` is `runtime::gate`).
fn named_unit(path: &str, units: &BTreeSet<String>) -> Option<String> {
    let mut segments = path.split("::");
    let top = segments.next()?;
    if GROUPS.contains(&top)
        && let Some(child) = segments.next()
    {
        let unit = format!("{top}::{child}");
        if units.contains(&unit) {
            return Some(unit);
        }
    }
    units.contains(top).then(|| top.to_owned())
}

/// The top-level module of a unit (`runtime::gate` is `runtime`).
fn top_level_of(unit: &str) -> &str {
    unit.split("::").next().unwrap_or(unit)
}

/// The braces a line opens minus those it closes, outside string and character literals.
fn brace_balance(line: &str) -> i64 {
    let mut balance = 0;
    let mut in_string = false;
    let mut characters = line.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '\\' if in_string => {
                characters.next();
            }
            '"' => in_string = !in_string,
            '\'' if !in_string => {
                // A character literal such as '{' or '\'' (a lifetime has no closing quote).
                let rest: String = characters.clone().take(3).collect();
                if rest.len() >= 2 && rest.chars().nth(1) == Some('\'') {
                    characters.next();
                    characters.next();
                } else if rest.starts_with('\\') && rest.chars().nth(2) == Some('\'') {
                    characters.nth(2);
                }
            }
            '{' if !in_string => balance += 1,
            '}' if !in_string => balance -= 1,
            _ => {}
        }
    }
    balance
}

/// The shipped lines of a file (comments and `#[cfg(test)]` items removed), and the modules it
/// declares under `#[cfg(test)]` with `mod NAME;`.
fn shipped_lines(text: &str) -> (Vec<&str>, Vec<String>) {
    let mut lines = Vec::new();
    let mut test_modules = Vec::new();
    let mut all = text.lines();
    while let Some(line) = all.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed != "#[cfg(test)]" {
            lines.push(line);
            continue;
        }
        // Skip the item under the attribute: further attributes, then one item.
        let mut item = all.next().unwrap_or_default();
        while item.trim_start().starts_with("#[") {
            item = all.next().unwrap_or_default();
        }
        let words: Vec<&str> = item.split_whitespace().collect();
        if let Some(position) = words.iter().position(|word| *word == "mod")
            && let Some(name) = words.get(position + 1)
            && let Some(name) = name.strip_suffix(';')
        {
            test_modules.push(name.to_owned());
            continue;
        }
        let mut balance = brace_balance(item);
        let mut opened = item.contains('{');
        if !opened && item.trim_end().ends_with(';') {
            continue;
        }
        for next in all.by_ref() {
            balance += brace_balance(next);
            opened |= next.contains('{');
            if opened && balance <= 0 {
                break;
            }
        }
    }
    (lines, test_modules)
}

/// The folder a file's child modules live in (`a/mod.rs` and `lib.rs`: beside it; `a/b.rs`: `a/b/`).
fn child_folder(file: &Utf8Path) -> Utf8PathBuf {
    let parent = file.parent().expect("a parent");
    match file.file_name() {
        Some("mod.rs" | "lib.rs" | "main.rs") => parent.to_owned(),
        _ => parent.join(file.file_stem().expect("a stem")),
    }
}

/// `module -> imported module -> the files that import it`, a module being a layering unit.
fn module_imports() -> BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>> {
    imports_between(layering_unit, named_unit)
}

/// The module a file is (`src/runtime/gate/command.rs` and `src/runtime/gate/mod.rs` are
/// `runtime::gate::command` and `runtime::gate`).
fn file_module(relative: &Utf8Path) -> String {
    let path = relative.as_str().strip_suffix(".rs").expect("a Rust file");
    let path = path.strip_suffix("/mod").unwrap_or(path);
    path.replace('/', "::")
}

/// The file module a path after `crate::` names: its longest prefix that is one.
fn named_file_module(path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let segments: Vec<&str> = path
        .split("::")
        .filter(|segment| !segment.is_empty())
        .collect();
    (1..=segments.len())
        .rev()
        .map(|length| segments[..length].join("::"))
        .find(|module| modules.contains(module))
}

/// `file module -> imported file module -> the file that imports it`, for every file that
/// names another by a `crate::` path.
fn file_imports() -> BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>> {
    imports_between(file_module, named_file_module)
}

/// `unit -> imported unit -> the files that import it`, where `unit_of` gives a file's unit and
/// `unit_named` the unit a `crate::` path names.
fn imports_between(
    unit_of: fn(&Utf8Path) -> String,
    unit_named: fn(&str, &BTreeSet<String>) -> Option<String>,
) -> BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>> {
    let root = source_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let units: BTreeSet<String> = files
        .iter()
        .map(|file| unit_of(file.strip_prefix(&root).expect("under src")))
        .collect();
    let mut test_only: Vec<Utf8PathBuf> = Vec::new();
    let mut texts = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a source file");
        let (_, test_modules) = shipped_lines(&text);
        let folder = child_folder(file);
        for name in test_modules {
            test_only.push(folder.join(format!("{name}.rs")));
            test_only.push(folder.join(&name));
        }
        texts.insert(file.clone(), text);
    }
    let mut imports: BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>> = BTreeMap::new();
    for (file, text) in &texts {
        if test_only.iter().any(|test| file.starts_with(test)) {
            continue;
        }
        let relative = file.strip_prefix(&root).expect("under src").to_owned();
        let module = unit_of(&relative);
        let (lines, _) = shipped_lines(text);
        for line in lines {
            for (index, _) in line.match_indices("crate::") {
                let path: String = line[index + "crate::".len()..]
                    .chars()
                    .take_while(|character| {
                        character.is_ascii_alphanumeric() || *character == '_' || *character == ':'
                    })
                    .collect();
                if let Some(name) = unit_named(&path, &units)
                    && name != module
                {
                    imports
                        .entry(module.clone())
                        .or_default()
                        .entry(name)
                        .or_default()
                        .insert(relative.clone());
                }
            }
        }
    }
    imports
}

/// The strongly connected components with more than one module (Tarjan's algorithm).
fn cycles(imports: &BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>>) -> Vec<Vec<String>> {
    struct Search<'a> {
        imports: &'a BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(search: &mut Search<'a>, module: &'a str) {
        let number = search.index.len();
        search.index.insert(module, number);
        search.low.insert(module, number);
        search.stack.push(module);
        for imported in search
            .imports
            .get(module)
            .into_iter()
            .flat_map(BTreeMap::keys)
        {
            let imported = imported.as_str();
            if !search.index.contains_key(imported) {
                visit(search, imported);
                let low = search.low[module].min(search.low[imported]);
                search.low.insert(module, low);
            } else if search.stack.contains(&imported) {
                let low = search.low[module].min(search.index[imported]);
                search.low.insert(module, low);
            }
        }
        if search.low[module] == search.index[module] {
            let mut component = Vec::new();
            while let Some(member) = search.stack.pop() {
                component.push(member.to_owned());
                if member == module {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                search.found.push(component);
            }
        }
    }
    let mut search = Search {
        imports,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for module in imports.keys() {
        if !search.index.contains_key(module.as_str()) {
            visit(&mut search, module);
        }
    }
    search.found
}

/// The imports between top-level modules only (`runtime::gate -> compile::discover` is
/// `runtime -> compile`).
fn top_level_imports(
    imports: &BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>>,
) -> BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>> {
    let mut top_level: BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>> = BTreeMap::new();
    for (module, imported) in imports {
        for (name, files) in imported {
            let (from, to) = (top_level_of(module), top_level_of(name));
            if from != to {
                top_level
                    .entry(from.to_owned())
                    .or_default()
                    .entry(to.to_owned())
                    .or_default()
                    .extend(files.iter().cloned());
            }
        }
    }
    top_level
}

/// Each cycle with the imports that make it, one per line.
fn explain_cycles(imports: &BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>>) -> String {
    let mut explanation = String::new();
    for component in &cycles(imports) {
        writeln!(explanation, "cycle between {component:?}:").expect("write to a string");
        for module in component {
            for (imported, files) in &imports[module] {
                if component.contains(imported) {
                    writeln!(explanation, "  {module} -> {imported}: {files:?}")
                        .expect("write to a string");
                }
            }
        }
    }
    explanation
}

/// `imports` has no cycle; `known` (`from` importing `to`) proves the reader read something.
fn assert_no_cycle(
    imports: &BTreeMap<String, BTreeMap<String, BTreeSet<Utf8PathBuf>>>,
    (from, to): (&str, &str),
) {
    assert!(
        imports
            .get(from)
            .is_some_and(|imported| imported.contains_key(to)),
        "the import reader found no `crate::{to}` in {from}: it reads nothing"
    );
    let explanation = explain_cycles(imports);
    assert!(explanation.is_empty(), "{explanation}");
}

#[test]
fn the_modules_import_one_another_without_a_cycle() {
    assert_no_cycle(&module_imports(), ("cli", "runtime::gate"));
}

#[test]
fn the_top_level_modules_import_one_another_without_a_cycle() {
    assert_no_cycle(
        &top_level_imports(&module_imports()),
        ("runtime", "compile"),
    );
}

/// A file-level cycle inside one unit (`runtime::gate::command` and
/// `runtime::gate::disabled_stages` naming each other) is a type that belongs lower down.
#[test]
fn the_files_import_one_another_without_a_cycle() {
    assert_no_cycle(
        &file_imports(),
        ("runtime::gate::step::command", "runtime::gate::command"),
    );
}

#[test]
fn src_declares_at_most_twelve_top_level_modules() {
    let library = std::fs::read_to_string(source_root().join("lib.rs")).expect("read src/lib.rs");
    let (lines, _) = shipped_lines(&library);
    let declared: Vec<&str> = lines
        .iter()
        .filter(|line| line.starts_with("pub mod ") || line.starts_with("mod "))
        .copied()
        .collect();
    assert!(declared.len() <= 12, "src/lib.rs declares {declared:?}");
}

#[test]
fn the_import_reader_skips_test_items_and_finds_cycles() {
    let text = "use crate::a::X;\n// crate::b in a comment\n#[cfg(test)]\nmod tests {\n    use crate::c::Y;\n    fn f() { let s = \"}\"; }\n}\n#[cfg(test)]\nmod fixtures;\nfn g() { crate::d::h(); }\n";
    let (lines, test_modules) = shipped_lines(text);
    assert_eq!(lines, vec!["use crate::a::X;", "fn g() { crate::d::h(); }"]);
    assert_eq!(test_modules, vec!["fixtures".to_owned()]);
    let edge = |from: &str, to: &str| {
        (
            from.to_owned(),
            BTreeMap::from([(to.to_owned(), BTreeSet::from([Utf8PathBuf::from("f.rs")]))]),
        )
    };
    let cyclic = BTreeMap::from([edge("a", "b"), edge("b", "c"), edge("c", "a")]);
    assert_eq!(cycles(&cyclic), vec![vec!["a", "b", "c"]]);
    let acyclic = BTreeMap::from([edge("a", "b"), edge("b", "c")]);
    assert!(cycles(&acyclic).is_empty());
}

/// The words that start an item at a file's top level (rustfmt indents everything nested).
const ITEM_STARTS: [&str; 13] = [
    "pub ",
    "pub(",
    "fn ",
    "impl",
    "struct ",
    "enum ",
    "const ",
    "static ",
    "use ",
    "mod ",
    "type ",
    "trait ",
    "macro_rules!",
];

/// The top-level items at or after a file's first `#[cfg(test)]` line that are not under a
/// `#[cfg(test)]` attribute (walking up over other attributes, multi-line ones included, and doc comments).
fn shipped_items_after_the_tests(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(first_test) = lines
        .iter()
        .position(|line| line.trim_start().starts_with("#[cfg(test)]"))
    else {
        return Vec::new();
    };
    let mut shipped = Vec::new();
    for (index, line) in lines.iter().enumerate().skip(first_test) {
        if !ITEM_STARTS.iter().any(|start| line.starts_with(start)) {
            continue;
        }
        let under_test = lines[first_test..index]
            .iter()
            .rev()
            .take_while(|above| {
                // An attribute, a doc comment, or the inner lines of a multi-line attribute.
                above.starts_with("#[")
                    || above.starts_with("///")
                    || above.starts_with(' ')
                    || above.starts_with(")]")
            })
            .any(|above| above.starts_with("#[cfg(test)]"));
        if !under_test {
            shipped.push(format!("line {}: `{line}`", index + 1));
        }
    }
    shipped
}

/// Every file's unit tests come last: from its first `#[cfg(test)]` line on it holds only
/// test items, so "lines outside unit tests" (everything before that line) is all that ships.
#[test]
fn no_shipped_code_follows_a_files_first_test_item() {
    let root = source_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut offenders = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read a source file");
        for item in shipped_items_after_the_tests(&text) {
            offenders.push(format!(
                "{}: {item}",
                file.strip_prefix(&root).unwrap_or(&file)
            ));
        }
    }
    assert!(
        offenders.is_empty(),
        "shipped items after the file's first #[cfg(test)] item (declare test modules at the end):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn an_item_after_a_test_module_declaration_is_found() {
    let text = "fn shipped() {}\n\n#[cfg(test)]\nmod tests_file;\n\n/// Doc.\npub fn hidden() {}\n\n#[cfg(test)]\n#[expect(x)]\nmod tests {\n    fn inner() {}\n}\n";
    assert_eq!(
        shipped_items_after_the_tests(text),
        vec!["line 7: `pub fn hidden() {}`".to_owned()]
    );
}
