package io.datum.cdc.cli.json;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;

/**
 * Formats {@code java.time} values as the JSON-lines format writes them (docs/json-lines.md, "JSON
 * lines (format 1)") into a reused character buffer, so that writing a value allocates nothing.
 *
 * <ul>
 *   <li>Years: ISO 8601 astronomical numbering, at least four digits, as {@link LocalDate#toString}
 *       prints them: year 0 is 1 BC ({@code 0000}), 44 BC is {@code -0043}, and years after 9999
 *       carry a {@code +} ({@code +10000-01-01}, ISO 8601's expanded form, which {@code java.time}
 *       parses back).
 *   <li>Times: {@code HH:mm:ss}, seconds always printed, then a fraction of at most six digits
 *       without trailing zeros, none when the microseconds are zero. Digits below the microsecond
 *       (PostgreSQL has none) are cut off, never rounded, so a value never moves to the next second
 *       or day.
 *   <li>Offsets ({@code timetz}): always {@code +HH:MM} or {@code -HH:MM} (never {@code Z}), with
 *       {@code :SS} appended only when the offset has seconds.
 *   <li>Instants: in UTC with a trailing {@code Z}.
 * </ul>
 *
 * <p>Infinite values (the types' MAX/MIN) are the caller's business. Not thread-safe.
 */
final class TemporalText {

  /** Long enough for {@code +1000000000-12-31T23:59:59.999999+15:59:59}. */
  private final char[] buffer = new char[48];

  /** Returns the buffer the format methods write into; valid up to the length they return. */
  char[] buffer() {
    return buffer;
  }

  /** Writes {@code 2026-11-30}; returns the length. */
  int date(LocalDate value) {
    return date(0, value.getYear(), value.getMonthValue(), value.getDayOfMonth());
  }

  /** Writes {@code 10:18:40.5} ({@code 24:00:00} for {@link LocalTime#MAX}); returns the length. */
  int time(LocalTime value) {
    return timeOfDay(0, value);
  }

  /** Writes {@code 10:18:40+02:00}; returns the length. */
  int offsetTime(OffsetTime value) {
    int p = timeOfDay(0, value.toLocalTime());
    return offset(p, value.getOffset().getTotalSeconds());
  }

  /** Writes {@code 2026-11-30T10:18:40.123456}; returns the length. */
  int localDateTime(LocalDateTime value) {
    int p = date(0, value.getYear(), value.getMonthValue(), value.getDayOfMonth());
    buffer[p++] = 'T';
    return time(p, value.toLocalTime());
  }

  /** Writes {@code 2026-11-30T08:18:40.123456Z} (UTC); returns the length. */
  int instant(Instant value) {
    long seconds = value.getEpochSecond();
    long epochDay = Math.floorDiv(seconds, 86_400L);
    int secondOfDay = (int) Math.floorMod(seconds, 86_400L);
    // Proleptic Gregorian date of an epoch day (H. Hinnant, "chrono-Compatible Low-Level Date
    // Algorithms", civil_from_days), the calendar java.time uses; allocation-free.
    long z = epochDay + 719_468L;
    long era = Math.floorDiv(z, 146_097L);
    long dayOfEra = z - era * 146_097L;
    long yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
    long dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
    long mp = (5 * dayOfYear + 2) / 153;
    int day = (int) (dayOfYear - (153 * mp + 2) / 5 + 1);
    int month = (int) (mp < 10 ? mp + 3 : mp - 9);
    long year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
    int p = date(0, (int) year, month, day);
    buffer[p++] = 'T';
    p = time(p, secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60, value.getNano());
    buffer[p++] = 'Z';
    return p;
  }

  private int date(int p, int year, int month, int day) {
    if (year < 0) {
      buffer[p++] = '-';
    } else if (year > 9999) {
      buffer[p++] = '+';
    }
    int abs = Math.abs(year); // java.time years lie within +-999,999,999
    p = abs > 9999 ? number(p, abs) : digits(p, abs, 4);
    buffer[p++] = '-';
    p = digits(p, month, 2);
    buffer[p++] = '-';
    return digits(p, day, 2);
  }

  private int time(int p, LocalTime value) {
    return time(p, value.getHour(), value.getMinute(), value.getSecond(), value.getNano());
  }

  /** A time of day; {@link LocalTime#MAX} is the decoder's stand-in for PostgreSQL's 24:00:00. */
  private int timeOfDay(int p, LocalTime value) {
    return value.equals(LocalTime.MAX) ? time(p, 24, 0, 0, 0) : time(p, value);
  }

  private int time(int p, int hour, int minute, int second, int nano) {
    p = digits(p, hour, 2);
    buffer[p++] = ':';
    p = digits(p, minute, 2);
    buffer[p++] = ':';
    p = digits(p, second, 2);
    int micros = nano / 1000;
    if (micros != 0) {
      buffer[p++] = '.';
      p = digits(p, micros, 6);
      while (buffer[p - 1] == '0') {
        p--;
      }
    }
    return p;
  }

  private int offset(int p, int totalSeconds) {
    buffer[p++] = totalSeconds < 0 ? '-' : '+';
    int abs = Math.abs(totalSeconds);
    p = digits(p, abs / 3600, 2);
    buffer[p++] = ':';
    p = digits(p, abs / 60 % 60, 2);
    if (abs % 60 != 0) {
      buffer[p++] = ':';
      p = digits(p, abs % 60, 2);
    }
    return p;
  }

  /** Writes a non-negative value zero-padded to exactly {@code width} digits. */
  private int digits(int p, int value, int width) {
    for (int i = p + width - 1; i >= p; i--) {
      buffer[i] = (char) ('0' + value % 10);
      value /= 10;
    }
    return p + width;
  }

  /** Writes a non-negative value with as many digits as it needs. */
  private int number(int p, int value) {
    int width = 1;
    for (int v = value / 10; v != 0; v /= 10) {
      width++;
    }
    return digits(p, value, width);
  }
}
