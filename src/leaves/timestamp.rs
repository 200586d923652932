//! Audit timestamps: `YYYY-MM-DDTHH:MM:SSZ` in UTC, whole seconds, as the reference's
//! `new Date().toISOString()` without its milliseconds (D25); and [`ns_since_epoch`], the one
//! count of nanoseconds the stat stamps use (the compile's record, the sync record, the shell
//! snapshots).
//!
//! A low-level module: it imports nothing from this crate, so that the ledger, the workspace
//! (a new intent's start date) and the write hook can all use it.
//!
//! Written here rather than taken from a date crate: the times it formats include stored ones
//! (a heartbeat, a snapshot's stamps) that may be any `SystemTime`, and this formatting is
//! total over them, where `chrono`'s conversion from a `SystemTime` panics outside its range.

use std::time::{SystemTime, UNIX_EPOCH};

/// `YYYY-MM-DDTHH:MM:SSZ` in UTC, whole seconds (JavaScript's `toISOString` without the
/// milliseconds; instants before 1970 round down, as `Date` does).
pub fn iso_timestamp(instant: SystemTime) -> String {
    let seconds = seconds_since_epoch(instant);
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3_600,
        second_of_day % 3_600 / 60,
        second_of_day % 60
    )
}

/// Nanoseconds from the epoch to `time` (0 before it, `u64::MAX` past 2554).
pub fn ns_since_epoch(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
    })
}

/// Whole seconds since 1970, rounded towards the past.
fn seconds_since_epoch(instant: SystemTime) -> i64 {
    match instant.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => {
            let before = before.duration();
            let whole = i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
            if before.subsec_nanos() > 0 {
                -whole - 1
            } else {
                -whole
            }
        }
    }
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`: eras of 400 years, years starting in March so the leap day comes last).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn timestamps_of_known_instants() {
        assert_eq!(iso_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(iso_timestamp(at(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(iso_timestamp(at(951_868_799)), "2000-02-29T23:59:59Z");
        assert_eq!(iso_timestamp(at(951_868_800)), "2000-03-01T00:00:00Z");
        assert_eq!(iso_timestamp(at(1_709_210_096)), "2024-02-29T12:34:56Z");
        assert_eq!(iso_timestamp(at(4_107_542_400)), "2100-03-01T00:00:00Z");
        assert_eq!(iso_timestamp(at(253_402_300_799)), "9999-12-31T23:59:59Z");
    }

    #[test]
    fn timestamps_drop_fractions_of_a_second() {
        let instant = at(1_709_210_096) + Duration::from_millis(789);
        assert_eq!(iso_timestamp(instant), "2024-02-29T12:34:56Z");
        let before_epoch = UNIX_EPOCH - Duration::from_millis(1);
        assert_eq!(iso_timestamp(before_epoch), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        let mut expected = (1970, 1, 1);
        for days in 0..146_097 {
            assert_eq!(civil_from_days(days), expected, "day {days}");
            expected = next_day(expected);
        }
    }

    fn next_day((year, month, day): (i64, i64, i64)) -> (i64, i64, i64) {
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let length = match month {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        match (day == length, month == 12) {
            (false, _) => (year, month, day + 1),
            (true, false) => (year, month + 1, 1),
            (true, true) => (year + 1, 1, 1),
        }
    }
}
