// Package market is the New York Stock Exchange's calendar: for a date in
// New York, whether the exchange trades, and when its regular session opens
// and closes (9:30 to 16:00, or to 13:00 on an early-close day). On that
// calendar it holds the one rule for each session (Regular, Day.InRegular;
// the extended session, 4:00 to 20:00, Day.InExtended) and for the broker's
// trading day, which ends at its 8 PM rollover (SessionDay, SessionStart,
// SessionEnd): the simulator fills orders and locator refuses a market
// order by them. It also holds the market's time zone, NewYork, so the
// zone has one home, and the one way a time is shown to a person: New York
// time, labelled ET (DateTime, TimeOfDay, DayMinute).
//
// It imports nothing of ours, so every package (jobs, ledger, the simulator)
// may use it.
//
// The calendar is written as NYSE's rules, not as a list of dates: no Go
// module for exchange calendars was among the checked, maintained ones
// available to this project, and the rules are short and well known, where a
// hand-kept list silently runs out. The rules (NYSE Rule 7.2 and the
// exchange's yearly holiday announcements):
//
//   - Holidays: New Year's Day, Martin Luther King Jr. Day (third Monday of
//     January), Washington's Birthday (third Monday of February), Good Friday
//     (two days before Easter Sunday, by the Gregorian computus), Memorial Day
//     (last Monday of May), Juneteenth (June 19, from 2022), Independence Day
//     (July 4), Labor Day (first Monday of September), Thanksgiving (fourth
//     Thursday of November) and Christmas Day.
//   - A holiday on a Saturday is observed the Friday before, except New
//     Year's Day, which is then not observed at all (Friday December 31 ends
//     an accounting year and trades); a holiday on a Sunday is observed the
//     Monday after.
//   - The session ends at 13:00 on the day before Independence Day (July 3)
//     when it is a trading day, on the day after Thanksgiving, and on
//     Christmas Eve when it is a trading day.
//   - Closures the rules cannot know (a national day of mourning) are listed
//     in unscheduled.
//
// Checked against NYSE Group's published holiday and early-close calendars
// for 2022 through 2028 (announcements of December 2021, November 2024 and
// December 2025) and the closure of January 9, 2025; see calendar_test.go.
// Answers for earlier years lack the unscheduled closures before 2025 (and
// early-close practice was less regular then); answers past 2028 are what the
// rules say, until NYSE announces otherwise or adds an unscheduled closure.
package market
