//! Documentation that must stay in step with the code.

#[test]
fn every_diagnostic_code_has_a_section() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/diagnostics.md"))
        .expect("docs/diagnostics.md");
    let headings: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("## "))
        .map(str::trim)
        .collect();
    let codes: Vec<&str> = aidlc::diagnostics::Code::ALL
        .iter()
        .map(|code| code.as_str())
        .collect();
    let missing: Vec<&&str> = codes
        .iter()
        .filter(|code| !headings.contains(code))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/diagnostics.md lacks sections for {missing:?}"
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
