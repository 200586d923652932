//! `file:` URIs and the absolute paths they name.
//!
//! Only `file:` URIs with an empty or `localhost` authority name files here; anything else (an
//! `untitled:` buffer, a remote file) is not a project file, and requests about it get no
//! result. Percent-escapes are decoded on the way in and written for every byte outside the
//! unreserved set on the way out, so a path with spaces or non-ASCII names round-trips.

use camino::{Utf8Path, Utf8PathBuf};
use lsp_types::Uri;

use crate::leaves::file_uri::{PATH_UNRESERVED, percent_encode_into};

/// The absolute path a `file:` URI names; `None` for any other URI, or one whose path is not
/// UTF-8 once decoded.
pub fn path_of_uri(uri: &Uri) -> Option<Utf8PathBuf> {
    let text = uri.as_str();
    let (scheme, rest) = text.split_once(':')?;
    if !scheme.eq_ignore_ascii_case("file") {
        return None;
    }
    let rest = rest.strip_prefix("//")?;
    let path_start = rest.find('/')?;
    let authority = &rest[..path_start];
    if !(authority.is_empty() || authority.eq_ignore_ascii_case("localhost")) {
        return None;
    }
    let path = &rest[path_start..];
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let decoded = percent_decode(path)?;
    let path = Utf8PathBuf::from(String::from_utf8(decoded).ok()?);
    path.is_absolute().then_some(path)
}

/// The `file:` URI of an absolute path.
pub fn uri_of_path(path: &Utf8Path) -> Option<Uri> {
    let mut text = String::from("file://");
    percent_encode_into(&mut text, path.as_str(), PATH_UNRESERVED);
    text.parse().ok()
}

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            decoded.push(bytes[index]);
            index += 1;
        }
    }
    Some(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_round_trip_with_spaces_and_non_ascii() {
        let path = Utf8Path::new("/tmp/my project/été/aidlc-x.md");
        let uri = uri_of_path(path).unwrap();
        assert_eq!(
            uri.as_str(),
            "file:///tmp/my%20project/%C3%A9t%C3%A9/aidlc-x.md"
        );
        assert_eq!(path_of_uri(&uri).unwrap(), path);
        let localhost: Uri = "file://localhost/tmp/a%20b.md".parse().unwrap();
        assert_eq!(path_of_uri(&localhost).unwrap(), "/tmp/a b.md");
    }

    #[test]
    fn other_uris_name_no_file() {
        for text in [
            "untitled:Untitled-1",
            "https://example.com/a.md",
            "file://server/share/a.md",
            "file:///tmp/%ff.md",
            "file:///tmp/%zz.md",
        ] {
            // A URI the type refuses to parse never reaches `path_of_uri`.
            if let Ok(uri) = text.parse::<Uri>() {
                assert_eq!(path_of_uri(&uri), None, "{text}");
            }
        }
    }
}
