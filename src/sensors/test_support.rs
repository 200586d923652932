//! What the sensors' unit tests share.

/// The words of `text`, split at white space: a worker argv written as one line.
pub(super) fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_owned).collect()
}
