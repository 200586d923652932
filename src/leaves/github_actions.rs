//! GitHub Actions workflow commands (`::error file=…,line=…,title=…::message`): the one place
//! that writes their syntax and escapes their values, for the compile's diagnostics and the
//! gate report alike.
//!
//! It knows nothing about what is reported: callers choose the command, the properties (in the
//! order they are written) and the message. It never prints.
//!
//! Invariant: no value can end the command early or start another one. The message escapes
//! `%`, CR and LF (the runner reads one command per line); a property value escapes `:` and
//! `,` as well, which would otherwise end the value.

/// `::command key=value,key=value::message`, or `::command::message` without properties.
pub fn workflow_command(command: &str, properties: &[(&str, &str)], message: &str) -> String {
    let properties = properties
        .iter()
        .map(|(key, value)| format!("{key}={}", escape_property(value)))
        .collect::<Vec<_>>()
        .join(",");
    let separator = if properties.is_empty() { "" } else { " " };
    format!(
        "::{command}{separator}{properties}::{}",
        escape_data(message)
    )
}

/// The escaping of a command's message.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value also escapes the `:` and `,` that would end it.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_properties_are_escaped_by_the_runner_rules() {
        assert_eq!(
            workflow_command(
                "warning",
                &[("file", "docs/a:b,c%.md"), ("line", "3")],
                "100% wrong\r\nsecond: line, here"
            ),
            "::warning file=docs/a%3Ab%2Cc%25.md,line=3::100%25 wrong%0D%0Asecond: line, here"
        );
    }

    #[test]
    fn a_command_without_properties_has_no_space() {
        assert_eq!(workflow_command("notice", &[], "a: b"), "::notice::a: b");
    }
}
