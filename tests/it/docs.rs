//! Documentation that must stay in step with the code.

/// `docs/diagnostics.md` is generated from the doc comments of `Code`; `UPDATE_DOCS=1` writes
/// the generated page instead of comparing.
#[test]
fn the_diagnostics_page_is_the_one_generated_from_the_codes() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/diagnostics.md");
    let generated = aidlc::leaves::diagnostics::page::diagnostics_page();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(path, &generated).expect("write docs/diagnostics.md");
        return;
    }
    let committed = std::fs::read_to_string(path).expect("docs/diagnostics.md");
    let first_difference = committed
        .lines()
        .zip(generated.lines())
        .position(|(committed, generated)| committed != generated)
        .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
    assert!(
        committed == generated,
        "docs/diagnostics.md is not the page generated from the doc comments of `Code` \
         (src/leaves/diagnostics/mod.rs) and src/leaves/diagnostics/page_introduction.md; first difference at \
         line {}. Edit those, then regenerate the page with \
         `UPDATE_DOCS=1 cargo test --locked --test it docs::the_diagnostics_page`",
        first_difference + 1
    );
}

#[test]
fn readme_starts_with_the_two_commands() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let first_block: Vec<&str> = text
        .split("```sh\n")
        .nth(1)
        .expect("a sh block")
        .split("```")
        .next()
        .unwrap()
        .lines()
        .collect();
    assert_eq!(
        first_block,
        [
            "cargo run --release -- init demo && cargo run --release -- compile --project-dir demo",
            "cargo test --locked"
        ]
    );
}

/// Every decision (`D4`), failure mode (`failure mode F9`, `failure modes F16, V2`) and
/// scenario (`scenario S12`, `scenarios S1–S18`) that the code and the documents cite has its
/// anchor in `docs/decisions.md` or `docs/failure-modes.md`, so that a reference always
/// resolves inside the repository.
#[test]
fn every_cited_decision_failure_mode_and_scenario_has_its_section() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut anchors = std::collections::BTreeSet::new();
    for document in ["docs/decisions.md", "docs/failure-modes.md"] {
        let text = std::fs::read_to_string(root.join(document)).expect(document);
        for piece in text.split("<a id=\"").skip(1) {
            anchors.insert(piece.split('"').next().unwrap_or_default().to_owned());
        }
    }
    let mut files = Vec::new();
    for area in ["src", "tests/it", "benches", "docs"] {
        collect_text_files(&root.join(area), &mut files);
    }
    for document in ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"] {
        files.push(root.join(document));
    }
    let mut dangling = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for id in cited_ids(&text) {
            if !anchors.contains(&id.to_lowercase()) {
                let shown = file.strip_prefix(root).unwrap_or(file).display();
                dangling.push(format!("{shown}: {id}"));
            }
        }
    }
    assert!(
        dangling.is_empty(),
        "cited, but no section in docs/decisions.md or docs/failure-modes.md: {dangling:#?}"
    );
}

fn collect_text_files(folder: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(folder)
        .expect("a folder of the repository")
        .map(|entry| entry.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_text_files(&path, files);
        } else if path
            .extension()
            .is_some_and(|extension| extension == "rs" || extension == "md" || extension == "snap")
        {
            files.push(path);
        }
    }
}

/// The ids `text` cites: every `D<n>` standing alone, and the ids of each list that follows
/// "failure mode(s)" or "scenario(s)" (`F16, V2`, `R1–R7`, `S1–S18`, `N2 and S12`).
fn cited_ids(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for (start, _) in text.match_indices('D') {
        let before = text[..start].chars().next_back();
        let digits: String = text[start + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let after = text[start + 1 + digits.len()..].chars().next();
        if before.is_none_or(|c| !is_word(c))
            && (1..=2).contains(&digits.len())
            && after.is_none_or(|c| !is_word(c))
        {
            ids.push(format!("D{digits}"));
        }
    }
    let lower = text.to_lowercase();
    for phrase in ["failure mode ", "failure modes ", "scenario ", "scenarios "] {
        for (start, _) in lower.match_indices(phrase) {
            ids.extend(id_list(&text[start + phrase.len()..]));
        }
    }
    ids
}

/// The ids at the start of `text`: `F9`, `F16, V2`, `R1–R7`, `Z1 and S12`; none when it does
/// not start with one.
fn id_list(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = text;
    loop {
        let mut chars = rest.chars();
        let Some(letter) = chars.next().filter(char::is_ascii_uppercase) else {
            break;
        };
        let digits: String = chars.clone().take_while(char::is_ascii_digit).collect();
        let after = rest[1 + digits.len()..].chars().next();
        if !(1..=2).contains(&digits.len())
            || after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            break;
        }
        ids.push(format!("{letter}{digits}"));
        rest = &rest[1 + digits.len()..];
        let Some(next) = [", ", " and ", "–"]
            .iter()
            .find_map(|separator| rest.strip_prefix(separator))
        else {
            break;
        };
        rest = next;
    }
    ids
}

/// No comment, message or document points at a file outside the repository (the decisions and
/// the failure modes are in `docs/`), so that every reference a reader follows resolves here.
/// The one exception is the reference's own sentence a scaffolded manifest carries byte for
/// byte ("Scaffolded by the §13 learning gate"), which is data, not a reference.
#[test]
fn no_reference_points_outside_the_repository() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for area in ["src", "tests/it", "benches", "docs"] {
        collect_text_files(&root.join(area), &mut files);
    }
    for document in ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"] {
        files.push(root.join(document));
    }
    let outside = [
        "../shared",
        "DECISIONS.md",
        "upstream-behaviour",
        "failure-modes.md §",
        "failure-modes §",
        "style-anchors",
        "rust-stack.md",
        "seed/07",
    ];
    let mut found = Vec::new();
    // This file names the forms it looks for.
    let this_file = root.join("tests/it/docs.rs");
    for file in files.iter().filter(|file| **file != this_file) {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (number, line) in text.lines().enumerate() {
            let line = line.replace("Scaffolded by the §13 learning gate", "");
            if outside.iter().any(|form| line.contains(form)) || line.contains('§') {
                let shown = file.strip_prefix(root).unwrap_or(file).display();
                found.push(format!("{shown}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "references that point outside the repository: {found:#?}"
    );
}

/// Every Rust file the README, ARCHITECTURE and CONTRIBUTING name in backticks exists: a path
/// (`plugin/compose.rs`, `tests/it/docs.rs`, `audit/ledger/event.rs` under its module) is the
/// end of a file's path in the repository, a bare name (`junit.rs`) a file's name under `src/`,
/// `tests/` or `benches/`. A file renamed or removed fails here until the docs follow it.
#[test]
fn every_rust_file_the_docs_name_exists() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for area in ["src", "tests", "benches"] {
        collect_text_files(&root.join(area), &mut files);
    }
    let known: Vec<String> = files
        .iter()
        .filter_map(|file| {
            file.strip_prefix(root)
                .ok()?
                .to_str()
                .map(|path| format!("/{path}"))
        })
        .collect();
    let mut missing = Vec::new();
    for document in ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"] {
        let text = std::fs::read_to_string(root.join(document)).unwrap();
        for quoted in text.split('`').skip(1).step_by(2) {
            let is_rust_file = std::path::Path::new(quoted)
                .extension()
                .is_some_and(|extension| extension == "rs")
                && !quoted.contains(['<', ' ', '*']);
            if !is_rust_file {
                continue;
            }
            let end = format!("/{}", quoted.trim_start_matches('/'));
            let found = known.iter().any(|path| path.ends_with(&end));
            if !found {
                missing.push(format!("{document}: `{quoted}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files the docs name that do not exist: {missing:#?}"
    );
}

/// `benches/twins.sh` builds the binary whose speed twins can be bypassed from this tree with
/// `benches/twins_bypass.patch` applied: the patch must apply to the code as it is, so the
/// figures the benches quote can be measured again.
#[test]
fn the_twins_bypass_patch_applies_to_this_tree() {
    let Some(git) = crate::support::system_tool("git") else {
        return;
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let check = std::process::Command::new(git)
        .current_dir(root)
        .args(["apply", "--check", "benches/twins_bypass.patch"])
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "benches/twins_bypass.patch no longer applies (refresh it as CONTRIBUTING says): {}",
        String::from_utf8_lossy(&check.stderr)
    );
}

/// The README is for users first: what aidlc is and for whom comes before any command, the
/// move from a reference install has its own section, the npm packages are not offered as
/// published, and `hook install --help` names the guard it installs.
#[test]
fn the_readme_and_the_help_tell_a_new_user_what_they_get() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let before_the_first_command = text.split("```").next().unwrap();
    assert!(
        before_the_first_command.contains("is a fast, strict engine for the AI-DLC sensor system")
            && before_the_first_command.contains("for teams that run AI-DLC"),
        "{before_the_first_command}"
    );
    assert!(text.contains("\n## Moving from the reference\n"));
    assert!(
        !text.contains("npm install --global aidlc ")
            && !text.contains("npm install --save-dev aidlc "),
        "the README offers an unpublished npm package as a way to install"
    );
    assert!(
        !text.contains("for 0.7, use"),
        "the Neovim snippet needs 0.8"
    );
    let project = crate::support::TestProject::empty();
    let help = project.run(&["hook", "install", "--help"]);
    assert!(help.stdout.contains("engine hook guard"), "{}", help.stdout);
}
