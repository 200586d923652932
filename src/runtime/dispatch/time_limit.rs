//! The enclosing time limits above each fire's own cap: the write hook's allowance for its
//! whole run, the gate's dispatch cap for each gate fire, and `gate check --timeout` for a
//! whole check. D23 states their sources, their refusals and that one that runs out never
//! yields a pass; `--timeout` that is not a duration is refused too.
//!
//! Must not: print, or read the environment itself (the CLI passes its reader in).

use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};

use crate::protocol::graph_format::GraphFormat;
use crate::protocol::graph_reader::UnreadValue;

/// The variable that overrides the write hook's allowance (milliseconds).
pub const HOOK_ALLOWANCE_VARIABLE: &str = "AIDLC_SENSOR_TIMEOUT_MS";
/// The settings key that overrides the write hook's allowance (milliseconds).
pub const HOOK_ALLOWANCE_SETTING: &str = "sensorTimeoutMs";
/// The variable that caps each gate fire's dispatch (milliseconds); unset, no enclosing cap.
pub const GATE_DISPATCH_VARIABLE: &str = "AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS";
/// The write hook's allowance on a 2.5 or 2.6 install (their hook's `90_000`).
pub const REFERENCE_HOOK_ALLOWANCE: Duration = Duration::from_secs(90);
/// The write hook's allowance on the newest layout (the seed's thirty minutes).
pub const NEWEST_HOOK_ALLOWANCE: Duration = Duration::from_secs(30 * 60);

/// A moment by which the work under a limit must be done, and the limit's name for messages
/// and audit notes (`the write hook's allowance (AIDLC_SENSOR_TIMEOUT_MS=1000)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnclosingLimit {
    pub deadline: Instant,
    pub name: String,
}

impl EnclosingLimit {
    /// A limit of `duration` from now.
    pub fn after(duration: Duration, name: impl Into<String>) -> Self {
        Self::counted_from(Instant::now(), duration, name)
    }

    /// A limit of `duration` from `start`; one too far away to represent is a year away.
    pub fn counted_from(start: Instant, duration: Duration, name: impl Into<String>) -> Self {
        const A_YEAR: Duration = Duration::from_secs(365 * 24 * 3600);
        Self {
            deadline: start
                .checked_add(duration)
                .or_else(|| start.checked_add(A_YEAR))
                .unwrap_or(start),
            name: name.into(),
        }
    }

    /// Time left before the limit runs out (zero once it has).
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    pub fn ran_out(&self) -> bool {
        self.remaining().is_zero()
    }

    /// Why a fire was not started: the limit ran out before it.
    pub fn not_started_reason(&self) -> String {
        format!("not started: {} ran out", self.name)
    }
}

/// A limit's value with where it came from, for its name in messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitValue {
    pub duration: Duration,
    /// `AIDLC_SENSOR_TIMEOUT_MS=1000`, `sensorTimeoutMs=1000 in .claude/settings.json`, or
    /// `the 2.6 default, 90 s`.
    pub source: String,
}

/// The enclosing limits of a gate run: each fire's dispatch cap
/// (`AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS`) and the deadline of the whole run (`gate check
/// --timeout`). The default is no enclosing limit at all, as the seed says for an unset cap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateLimits {
    pub dispatch_cap: Option<LimitValue>,
    pub run: Option<EnclosingLimit>,
}

impl GateLimits {
    /// The limit of one gate fire starting now: its dispatch cap from now, or what is left of
    /// the run, whichever runs out first.
    pub fn for_one_fire(&self) -> Option<EnclosingLimit> {
        let cap = self.dispatch_cap.as_ref().map(|cap| {
            EnclosingLimit::after(
                cap.duration,
                format!("the gate's dispatch cap ({})", cap.source),
            )
        });
        // On a tie, the run's.
        [self.run.clone(), cap]
            .into_iter()
            .flatten()
            .min_by_key(|limit| limit.deadline)
    }
}

/// A positive whole number of milliseconds, or the refusal naming `what` and the value.
pub fn positive_milliseconds(what: &str, value: &str) -> Result<Duration, String> {
    let trimmed = value.trim();
    match trimmed.parse::<u64>() {
        Ok(millis) if millis > 0 && trimmed.bytes().all(|byte| byte.is_ascii_digit()) => {
            Ok(Duration::from_millis(millis))
        }
        _ => Err(format!(
            "{what} must be a positive whole number of milliseconds, got \"{value}\""
        )),
    }
}

/// What to do about a refused [`gate_dispatch_cap`], for the commands that read it.
pub const GATE_DISPATCH_CAP_HELP: &str =
    "unset it for no enclosing cap, or give a number of milliseconds above 0";

/// `AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS` read through `env`: `None` when unset (no enclosing
/// cap), else the positive value, else the refusal.
pub fn gate_dispatch_cap(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<LimitValue>, String> {
    let Some(value) = env(GATE_DISPATCH_VARIABLE) else {
        return Ok(None);
    };
    let duration = positive_milliseconds(GATE_DISPATCH_VARIABLE, &value)?;
    Ok(Some(LimitValue {
        duration,
        source: format!("{GATE_DISPATCH_VARIABLE}={value}"),
    }))
}

/// The settings files the write hook's allowance is read from, in order: the project's
/// `<harness>/settings.json`, then the user's `~/<harness>/settings.json` (`home` is `$HOME`).
pub fn hook_settings_files(
    project_dir: &Utf8Path,
    harness_dir_name: &str,
    home: Option<&Utf8Path>,
) -> Vec<Utf8PathBuf> {
    [Some(project_dir), home]
        .into_iter()
        .flatten()
        .map(|dir| dir.join(harness_dir_name).join("settings.json"))
        .collect()
}

/// The write hook's allowance: `AIDLC_SENSOR_TIMEOUT_MS`, else `sensorTimeoutMs` in the first
/// of `settings_files` that has it, else the install's default. A value that is not a positive
/// whole number, and a settings file that exists but is not a JSON object, are refused.
pub fn hook_allowance(
    env: &dyn Fn(&str) -> Option<String>,
    settings_files: &[Utf8PathBuf],
    version: GraphFormat,
) -> Result<LimitValue, String> {
    if let Some(value) = env(HOOK_ALLOWANCE_VARIABLE) {
        let duration = positive_milliseconds(HOOK_ALLOWANCE_VARIABLE, &value)?;
        return Ok(LimitValue {
            duration,
            source: format!("{HOOK_ALLOWANCE_VARIABLE}={value}"),
        });
    }
    for file in settings_files {
        if let Some(found) = allowance_setting(file)? {
            return Ok(found);
        }
    }
    Ok(match version {
        GraphFormat::Reference25 | GraphFormat::Reference26 => LimitValue {
            duration: REFERENCE_HOOK_ALLOWANCE,
            source: format!("the {version} install's default, 90 s"),
        },
        GraphFormat::Gate => LimitValue {
            duration: NEWEST_HOOK_ALLOWANCE,
            source: "the default, 30 minutes".to_owned(),
        },
    })
}

/// `sensorTimeoutMs` in one settings file: `None` when the file or the key is absent.
fn allowance_setting(file: &Utf8Path) -> Result<Option<LimitValue>, String> {
    let text = match crate::leaves::fs_util::read_input_text(file) {
        Ok(text) => text,
        Err(error) if error.is_not_found() => return Ok(None),
        Err(error) => return Err(format!("cannot read {file}: {error}")),
    };
    let object = read_settings(&text).map_err(|error| {
        format!(
            "{file} is not valid JSON ({error}), so its {HOOK_ALLOWANCE_SETTING} cannot be read"
        )
    })?;
    let Some(AllowanceSetting(setting)) = object else {
        return Err(format!(
            "{file} is not a JSON object, so its {HOOK_ALLOWANCE_SETTING} cannot be read"
        ));
    };
    let Some(value) = &setting else {
        return Ok(None);
    };
    let shown = value.to_string();
    let duration = value
        .as_u64()
        .filter(|millis| *millis > 0)
        .map(Duration::from_millis)
        .ok_or_else(|| {
            format!(
                "{HOOK_ALLOWANCE_SETTING} in {file} must be a positive whole number of milliseconds, got {shown}"
            )
        })?;
    Ok(Some(LimitValue {
        duration,
        source: format!("{HOOK_ALLOWANCE_SETTING}={shown} in {file}"),
    }))
}

/// A settings text read as `serde_json::Value` reads it (the same texts are accepted and
/// refused, with the same messages), keeping only what the allowance needs: `Some` with the
/// `sensorTimeoutMs` of an object, `None` for any other JSON value.
fn read_settings(text: &str) -> serde_json::Result<Option<AllowanceSetting>> {
    // JSON's whitespace before the top-level value; an object's first byte is then `{`.
    if text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
    {
        serde_json::from_str::<AllowanceSetting>(text).map(Some)
    } else {
        serde_json::from_str::<UnreadValue>(text).map(|_| None)
    }
}

/// A settings object's `sensorTimeoutMs` (the last one when repeated, as `Value` keeps it),
/// every other member checked as `serde_json::Value` checks it but not built: a settings file is
/// mostly hooks, and building its whole tree was most of the cost of reading it.
struct AllowanceSetting(Option<serde_json::Value>);

impl<'de> serde::Deserialize<'de> for AllowanceSetting {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(AllowanceSettingVisitor)
    }
}

struct AllowanceSettingVisitor;

impl<'de> serde::de::Visitor<'de> for AllowanceSettingVisitor {
    type Value = AllowanceSetting;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<AllowanceSetting, A::Error> {
        let mut setting = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == HOOK_ALLOWANCE_SETTING {
                setting = Some(map.next_value::<serde_json::Value>()?);
            } else {
                map.next_value::<UnreadValue>()?;
            }
        }
        Ok(AllowanceSetting(setting))
    }
}

/// A duration such as `90s`, `10m`, `1h30m`, `500ms`: whole numbers, each with a unit (`ms`,
/// `s`, `m`, `h`), more than zero in total. A bare number is refused: its unit would be a guess.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let refusal = || {
        format!(
            "\"{text}\" is not a duration: write a whole number with a unit, such as 90s, 10m, 1h30m or 500ms"
        )
    };
    let mut total = Duration::ZERO;
    // An empty text sums to zero, refused below.
    let mut rest = text.trim();
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(refusal());
        }
        let number: u64 = rest[..digits].parse().map_err(|_| refusal())?;
        rest = &rest[digits..];
        let unit_length = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = match &rest[..unit_length] {
            "ms" => Duration::from_millis(number),
            "s" => Duration::from_secs(number),
            "m" => Duration::from_secs(number.saturating_mul(60)),
            "h" => Duration::from_secs(number.saturating_mul(3600)),
            _ => return Err(refusal()),
        };
        rest = &rest[unit_length..];
        total = total.saturating_add(unit);
    }
    if total.is_zero() {
        return Err(refusal());
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn milliseconds_must_be_a_positive_whole_number() {
        assert_eq!(
            positive_milliseconds("X", "1500"),
            Ok(Duration::from_millis(1500))
        );
        for bad in [
            "",
            "0",
            "-5",
            "1.5",
            "abc",
            "1e3",
            "+7",
            "99999999999999999999999",
        ] {
            assert_eq!(
                positive_milliseconds("X", bad),
                Err(format!(
                    "X must be a positive whole number of milliseconds, got \"{bad}\""
                )),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration(" 2s "), Ok(Duration::from_secs(2)));
        for bad in ["", "90", "s", "1x", "0s", "1.5s", "-1s", "1 s", "m5"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
        assert!(
            parse_duration("90")
                .unwrap_err()
                .contains("write a whole number with a unit")
        );
    }

    #[test]
    fn the_gate_cap_is_off_when_unset_and_refused_when_malformed() {
        assert_eq!(gate_dispatch_cap(&no_env), Ok(None));
        let set = |value: &'static str| {
            move |name: &str| (name == GATE_DISPATCH_VARIABLE).then(|| value.to_owned())
        };
        assert_eq!(
            gate_dispatch_cap(&set("2500")).unwrap().unwrap().duration,
            Duration::from_millis(2500)
        );
        assert_eq!(
            gate_dispatch_cap(&set("soon")),
            Err(
                "AIDLC_GATE_SENSOR_DISPATCH_TIMEOUT_MS must be a positive whole number of milliseconds, got \"soon\""
                    .to_owned()
            )
        );
    }

    #[test]
    fn the_hook_allowance_reads_the_variable_then_the_project_then_the_user() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let project = root.join("project/.claude/settings.json");
        let user = root.join("home/.claude/settings.json");
        std::fs::create_dir_all(project.parent().unwrap()).unwrap();
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        let files = vec![project.clone(), user.clone()];

        let default = hook_allowance(&no_env, &files, GraphFormat::Gate).unwrap();
        assert_eq!(default.duration, NEWEST_HOOK_ALLOWANCE);
        let default_26 = hook_allowance(&no_env, &files, GraphFormat::Reference26).unwrap();
        assert_eq!(default_26.duration, REFERENCE_HOOK_ALLOWANCE);

        std::fs::write(&user, r#"{"sensorTimeoutMs": 4000}"#).unwrap();
        let from_user = hook_allowance(&no_env, &files, GraphFormat::Gate).unwrap();
        assert_eq!(from_user.duration, Duration::from_secs(4));
        assert_eq!(from_user.source, format!("sensorTimeoutMs=4000 in {user}"));

        std::fs::write(&project, r#"{"hooks": {}, "sensorTimeoutMs": 3000}"#).unwrap();
        let from_project = hook_allowance(&no_env, &files, GraphFormat::Gate).unwrap();
        assert_eq!(from_project.duration, Duration::from_secs(3));

        let variable = |name: &str| (name == HOOK_ALLOWANCE_VARIABLE).then(|| "2000".to_owned());
        let from_variable = hook_allowance(&variable, &files, GraphFormat::Gate).unwrap();
        assert_eq!(from_variable.duration, Duration::from_secs(2));
        assert_eq!(from_variable.source, "AIDLC_SENSOR_TIMEOUT_MS=2000");
    }

    #[test]
    fn a_malformed_allowance_is_refused_with_where_it_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let project = root.join("settings.json");
        let files = vec![project.clone()];
        for (text, expected) in [
            (
                r#"{"sensorTimeoutMs": "fast"}"#,
                format!(
                    "sensorTimeoutMs in {project} must be a positive whole number of milliseconds, got \"fast\""
                ),
            ),
            (
                r#"{"sensorTimeoutMs": 0}"#,
                format!(
                    "sensorTimeoutMs in {project} must be a positive whole number of milliseconds, got 0"
                ),
            ),
            (
                "[1]",
                format!("{project} is not a JSON object, so its sensorTimeoutMs cannot be read"),
            ),
        ] {
            std::fs::write(&project, text).unwrap();
            assert_eq!(
                hook_allowance(&no_env, &files, GraphFormat::Gate),
                Err(expected),
                "{text}"
            );
        }
        std::fs::write(&project, "{ not json").unwrap();
        assert!(
            hook_allowance(&no_env, &files, GraphFormat::Gate)
                .unwrap_err()
                .starts_with(&format!("{project} is not valid JSON"))
        );
        let variable = |name: &str| (name == HOOK_ALLOWANCE_VARIABLE).then(|| "0".to_owned());
        assert_eq!(
            hook_allowance(&variable, &[], GraphFormat::Gate),
            Err(
                "AIDLC_SENSOR_TIMEOUT_MS must be a positive whole number of milliseconds, got \"0\""
                    .to_owned()
            )
        );
    }

    #[test]
    fn the_earliest_limit_wins() {
        let cap = LimitValue {
            duration: Duration::from_secs(1),
            source: "short".to_owned(),
        };
        let long = EnclosingLimit::after(Duration::from_secs(100), "long");
        let both = GateLimits {
            dispatch_cap: Some(cap),
            run: Some(long.clone()),
        };
        let short = both.for_one_fire().unwrap();
        assert_eq!(short.name, "the gate's dispatch cap (short)");
        let run_only = GateLimits {
            dispatch_cap: None,
            run: Some(long.clone()),
        };
        assert_eq!(run_only.for_one_fire(), Some(long));
        assert_eq!(GateLimits::default().for_one_fire(), None);
        assert!(!short.ran_out());
        assert!(EnclosingLimit::after(Duration::ZERO, "gone").ran_out());
    }

    /// What `serde_json::Value` makes of a text, as the settings reader keeps it: the error's
    /// message, else `Some(setting)` for an object and `None` for anything else.
    type Reading = Result<Option<Option<serde_json::Value>>, String>;

    fn read_as_a_value(text: &str) -> Reading {
        serde_json::from_str::<serde_json::Value>(text)
            .map(|value| {
                value
                    .as_object()
                    .map(|object| object.get(HOOK_ALLOWANCE_SETTING).cloned())
            })
            .map_err(|error| error.to_string())
    }

    fn read_as_settings(text: &str) -> Reading {
        read_settings(text)
            .map(|object| object.map(|setting| setting.0))
            .map_err(|error| error.to_string())
    }

    #[test]
    fn the_settings_reader_accepts_and_refuses_what_a_json_value_does() {
        let deep = format!("{{\"hooks\": {}{}}}", "[".repeat(200), "]".repeat(200));
        let texts = [
            r#"{"sensorTimeoutMs": 5}"#,
            r#"{"sensorTimeoutMs": 5, "hooks": {}, "sensorTimeoutMs": 7}"#,
            r#"{"sensorTimeoutMs": {"x": [1, 2.5, "three"]}}"#,
            r#"{"hooks": {"PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command"}]}]}}"#,
            r#"{"hooks": [1e400]}"#,
            r#"{"hooks": "\ud800"}"#,
            r#"{"hooks": "tab\tand \u00e9"}"#,
            r#"{"hooks": 1,}"#,
            r#"{"hooks": 01}"#,
            "{} trailing",
            "",
            "null",
            "[1, {\"sensorTimeoutMs\": 5}]",
            "\"text\"",
            "-3",
            "true",
            " \r\n\t{\"sensorTimeoutMs\": 5}",
            "\n[]",
            "\u{feff}{}",
            "{",
            "{\"sensorTimeoutMs\"}",
            &deep,
        ];
        for text in texts {
            assert_eq!(read_as_settings(text), read_as_a_value(text), "{text}");
        }
        assert_eq!(
            read_as_settings(texts[1]),
            Ok(Some(Some(serde_json::json!(7))))
        );
        assert!(read_as_settings(&deep).is_err(), "nesting is still bounded");
    }
}
