package io.datum.cdc.core.types;

import io.datum.cdc.event.PgInterval;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;

/**
 * Parses PostgreSQL's text output of dates, times, timestamps and intervals with {@code
 * DateStyle=ISO} and {@code IntervalStyle=iso_8601} (or {@code postgres}) (PostgreSQL docs, 8.5.2
 * Date/Time Output and 8.5.5 Interval Output; src/backend/utils/adt/datetime.c, {@code
 * EncodeDateOnly}, {@code EncodeDateTime}, {@code EncodeInterval}).
 *
 * <p>BC years ({@code "0044-03-15 BC"}, the suffix after the time zone for {@code timestamptz})
 * become ISO astronomical years (44 BC is year -43). {@code infinity}/{@code -infinity} become the
 * Java type's MAX/MIN. {@code time} and {@code timetz} may be {@code 24:00:00}, which Java cannot
 * represent: it becomes {@link LocalTime#MAX}. Parsers throw {@link IllegalArgumentException} or
 * {@link DateTimeException} for text of another form.
 */
final class PgTemporalValues {

  private static final long HOUR = 3_600_000_000L;
  private static final long MINUTE = 60_000_000L;

  private PgTemporalValues() {}

  /** Parses {@code date} output: {@code 2026-11-30}, {@code 0044-03-15 BC}, {@code infinity}. */
  static LocalDate parseDate(String text) {
    if (text.equals("infinity")) {
      return LocalDate.MAX;
    } else if (text.equals("-infinity")) {
      return LocalDate.MIN;
    }
    Cursor c = new Cursor(text);
    LocalDate date = c.date();
    c.era();
    c.end();
    return date;
  }

  /** Parses {@code time} output: {@code 10:18:40}, {@code 10:18:40.5}, {@code 24:00:00}. */
  static LocalTime parseTime(String text) {
    Cursor c = new Cursor(text);
    LocalTime time = c.time(true);
    c.end();
    return time;
  }

  /** Parses {@code timetz} output: {@code 10:18:40+02}, {@code 10:18:40.5-03:30}. */
  static OffsetTime parseTimeTz(String text) {
    Cursor c = new Cursor(text);
    LocalTime time = c.time(true);
    ZoneOffset offset = c.offset();
    c.end();
    return OffsetTime.of(time, offset);
  }

  /** Parses {@code timestamp} output: {@code 2026-11-30 10:18:40.123456}, BC, infinity. */
  static LocalDateTime parseTimestamp(String text) {
    if (text.equals("infinity")) {
      return LocalDateTime.MAX;
    } else if (text.equals("-infinity")) {
      return LocalDateTime.MIN;
    }
    Cursor c = new Cursor(text);
    LocalDateTime result = c.dateTime(false);
    c.end();
    return result;
  }

  /** Parses {@code timestamptz} output: {@code 2026-11-30 10:18:40.123456+05:30}, BC, infinity. */
  static Instant parseTimestampTz(String text) {
    Instant common = commonTimestampTz(text);
    return common != null ? common : parseTimestampTzGeneral(text);
  }

  /** {@link #parseTimestampTz} without the fast path for the common shape, for tests. */
  static Instant parseTimestampTzGeneral(String text) {
    if (text.equals("infinity")) {
      return Instant.MAX;
    } else if (text.equals("-infinity")) {
      return Instant.MIN;
    }
    Cursor c = new Cursor(text);
    LocalDateTime local = c.dateTime(true);
    c.end();
    return local.toInstant(c.zone);
  }

  /**
   * The instant of the shape almost every {@code timestamptz} value has, {@code YYYY-MM-DD
   * HH:MM:SS[.F]±HH[:MM[:SS]]} with a four-digit AD year, computed without the intermediate date,
   * time and offset objects; null for anything else or anything out of range, which {@link
   * #parseTimestampTzGeneral} then parses or refuses. Same result as the general path
   * (PgTimestampTzFastPathTest compares them).
   */
  static Instant commonTimestampTz(String s) {
    int n = s.length();
    if (n < 22
        || s.charAt(4) != '-'
        || s.charAt(7) != '-'
        || s.charAt(10) != ' '
        || s.charAt(13) != ':'
        || s.charAt(16) != ':') {
      return null;
    }
    int year = digits(s, 0, 4);
    int month = digits(s, 5, 2);
    int day = digits(s, 8, 2);
    int hour = digits(s, 11, 2);
    int minute = digits(s, 14, 2);
    int second = digits(s, 17, 2);
    if (year <= 0
        || month < 1
        || month > 12
        || day < 1
        || day > java.time.Month.of(month).length(java.time.Year.isLeap(year))
        || hour < 0
        || hour > 23
        || minute < 0
        || minute > 59
        || second < 0
        || second > 59) {
      return null;
    }
    int i = 19;
    long nanos = 0;
    if (s.charAt(i) == '.') {
      int start = ++i;
      while (i < n && isDigit(s.charAt(i))) {
        nanos = nanos * 10 + (s.charAt(i++) - '0');
      }
      int count = i - start;
      if (count == 0 || count > 9) {
        return null;
      }
      for (int d = count; d < 9; d++) {
        nanos *= 10;
      }
    }
    if (i + 3 > n || (s.charAt(i) != '+' && s.charAt(i) != '-')) {
      return null;
    }
    int sign = s.charAt(i) == '+' ? 1 : -1;
    int offsetHours = digits(s, i + 1, 2);
    int offsetMinutes = 0;
    int offsetSeconds = 0;
    i += 3;
    if (i < n) {
      if (i + 3 > n || s.charAt(i) != ':') {
        return null;
      }
      offsetMinutes = digits(s, i + 1, 2);
      i += 3;
      if (i < n) {
        if (i + 3 != n || s.charAt(i) != ':') {
          return null;
        }
        offsetSeconds = digits(s, i + 1, 2);
        i += 3;
      }
    }
    if (offsetHours < 0
        || offsetHours > 18
        || offsetMinutes < 0
        || offsetMinutes > 59
        || offsetSeconds < 0
        || offsetSeconds > 59) {
      return null;
    }
    int offset = sign * (offsetHours * 3600 + offsetMinutes * 60 + offsetSeconds);
    if (Math.abs(offset) > 18 * 3600) {
      return null;
    }
    long epochDay = java.time.LocalDate.of(year, month, day).toEpochDay();
    long epochSecond = epochDay * 86_400 + hour * 3600 + minute * 60 + second - offset;
    return Instant.ofEpochSecond(epochSecond, nanos);
  }

  /** The value of {@code count} decimal digits at {@code at}, or -1 if one is not a digit. */
  private static int digits(String s, int at, int count) {
    int v = 0;
    for (int k = at; k < at + count; k++) {
      char c = s.charAt(k);
      if (!isDigit(c)) {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }

  /**
   * Parses {@code interval} output in the {@code iso_8601} style ({@code P1Y2M3DT4H5M6.5S}, {@code
   * P-1Y-2M3DT-4H-5M-6.5S}, {@code PT0S}) or, as a fallback, the {@code postgres} style ({@code 1
   * year 2 mons 3 days 04:05:06.5}).
   */
  static PgInterval parseInterval(String text) {
    if (text.equals("infinity")) {
      return PgInterval.INFINITY; // PostgreSQL 17+
    }
    if (text.equals("-infinity")) {
      return PgInterval.NEGATIVE_INFINITY;
    }
    return text.startsWith("P") ? parseIsoInterval(text) : parsePostgresInterval(text);
  }

  private static PgInterval parseIsoInterval(String s) {
    long months = 0;
    long days = 0;
    long micros = 0;
    boolean inTime = false;
    boolean any = false;
    int i = 1;
    int n = s.length();
    while (i < n) {
      if (s.charAt(i) == 'T' && !inTime) {
        inTime = true;
        i++;
        continue;
      }
      long sign = 1;
      if (s.charAt(i) == '-' || s.charAt(i) == '+') {
        sign = s.charAt(i++) == '-' ? -1 : 1;
      }
      long whole = 0;
      int digits = 0;
      for (; i < n && isDigit(s.charAt(i)); i++, digits++) {
        whole = Math.addExact(Math.multiplyExact(whole, 10), s.charAt(i) - '0');
      }
      long fraction = -1;
      if (i < n && s.charAt(i) == '.') {
        fraction = 0;
        int fd = 0;
        for (i++; i < n && isDigit(s.charAt(i)); i++, fd++) {
          fraction = fd < 6 ? fraction * 10 + (s.charAt(i) - '0') : fraction;
        }
        for (; fd < 6; fd++) {
          fraction *= 10;
        }
      }
      if (digits == 0 || i >= n) {
        throw new IllegalArgumentException("bad ISO-8601 interval at index " + i);
      }
      char unit = s.charAt(i++);
      if (fraction >= 0 && !(inTime && unit == 'S')) {
        throw new IllegalArgumentException("fraction allowed on seconds only, at index " + i);
      }
      switch (inTime ? Character.toLowerCase(unit) : unit) {
        case 'Y' -> months = Math.addExact(months, Math.multiplyExact(sign * whole, 12));
        case 'M' -> months = Math.addExact(months, sign * whole);
        case 'W' -> days = Math.addExact(days, Math.multiplyExact(sign * whole, 7));
        case 'D' -> days = Math.addExact(days, sign * whole);
        case 'h' -> micros = Math.addExact(micros, Math.multiplyExact(sign * whole, HOUR));
        case 'm' -> micros = Math.addExact(micros, Math.multiplyExact(sign * whole, MINUTE));
        case 's' ->
            micros =
                Math.addExact(
                    micros,
                    sign
                        * Math.addExact(
                            Math.multiplyExact(whole, 1_000_000L), Math.max(fraction, 0)));
        default ->
            throw new IllegalArgumentException(
                "unknown ISO-8601 interval unit '" + unit + "' at index " + (i - 1));
      }
      any = true;
    }
    if (!any) {
      throw new IllegalArgumentException("empty ISO-8601 interval");
    }
    return new PgInterval(Math.toIntExact(months), Math.toIntExact(days), micros);
  }

  private static PgInterval parsePostgresInterval(String s) {
    String[] tokens = s.split(" ", -1);
    long months = 0;
    long days = 0;
    long micros = 0;
    for (int t = 0; t < tokens.length; t++) {
      String token = tokens[t];
      if (token.indexOf(':') >= 0) {
        Cursor c = new Cursor(token);
        long sign = c.accept('-') ? -1 : 1;
        long hours = c.number(1, 12);
        c.expect(':');
        long minutes = c.number(2, 2);
        c.expect(':');
        long seconds = c.number(2, 2);
        long nanos = c.accept('.') ? c.fraction() : 0;
        c.end();
        long rest = (minutes * 60 + seconds) * 1_000_000L + nanos / 1000;
        long total = Math.addExact(Math.multiplyExact(hours, HOUR), rest);
        micros = Math.addExact(micros, sign * total);
      } else if (t + 1 < tokens.length) {
        long value = Long.parseLong(token);
        String unit = tokens[++t];
        if (unit.equals("year") || unit.equals("years")) {
          months = Math.addExact(months, Math.multiplyExact(value, 12));
        } else if (unit.equals("mon") || unit.equals("mons")) {
          months = Math.addExact(months, value);
        } else if (unit.equals("day") || unit.equals("days")) {
          days = Math.addExact(days, value);
        } else {
          throw new IllegalArgumentException("unknown interval unit \"" + unit + '"');
        }
      } else {
        throw new IllegalArgumentException("not an interval in ISO-8601 or postgres style");
      }
    }
    return new PgInterval(Math.toIntExact(months), Math.toIntExact(days), micros);
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  /** A position in a text being parsed. */
  private static final class Cursor {
    private final String s;
    private int i;
    private ZoneOffset zone;

    Cursor(String s) {
      this.s = s;
    }

    private IllegalArgumentException bad(String what) {
      return new IllegalArgumentException(what + " at index " + i);
    }

    long number(int minDigits, int maxDigits) {
      int start = i;
      long value = 0;
      while (i < s.length() && isDigit(s.charAt(i)) && i - start < maxDigits) {
        value = value * 10 + (s.charAt(i++) - '0');
      }
      if (i - start < minDigits || (i < s.length() && isDigit(s.charAt(i)))) {
        i = start;
        throw bad("expected " + minDigits + " to " + maxDigits + " digits");
      }
      return value;
    }

    boolean accept(char c) {
      if (i < s.length() && s.charAt(i) == c) {
        i++;
        return true;
      }
      return false;
    }

    void expect(char c) {
      if (!accept(c)) {
        throw bad("expected '" + c + "'");
      }
    }

    void end() {
      if (i != s.length()) {
        throw bad("unexpected text");
      }
    }

    /** Reads the digits after a decimal point as nanoseconds (digits past 9 are dropped). */
    long fraction() {
      int start = i;
      long nanos = 0;
      for (; i < s.length() && isDigit(s.charAt(i)); i++) {
        if (i - start < 9) {
          nanos = nanos * 10 + (s.charAt(i) - '0');
        }
      }
      if (i == start) {
        throw bad("expected digits after '.'");
      }
      for (int d = i - start; d < 9; d++) {
        nanos *= 10;
      }
      return nanos;
    }

    /** Reads {@code Y-MM-DD}; the year is BC if the text ends with {@code " BC"}. */
    LocalDate date() {
      long year = number(4, 9);
      expect('-');
      int month = (int) number(2, 2);
      expect('-');
      int day = (int) number(2, 2);
      if (year == 0) {
        throw new IllegalArgumentException("year 0 does not exist in PostgreSQL's calendar");
      }
      return LocalDate.of((int) (s.endsWith(" BC") ? 1 - year : year), month, day);
    }

    /** Consumes the {@code " BC"} suffix, which must follow the current position directly. */
    void era() {
      if (s.endsWith(" BC")) {
        if (i != s.length() - 3) {
          throw bad("unexpected text before BC");
        }
        i = s.length();
      }
    }

    LocalTime time(boolean allow24) {
      int hour = (int) number(2, 2);
      expect(':');
      int minute = (int) number(2, 2);
      expect(':');
      int second = (int) number(2, 2);
      int nanos = accept('.') ? (int) fraction() : 0;
      if (allow24 && hour == 24 && minute == 0 && second == 0 && nanos == 0) {
        return LocalTime.MAX;
      }
      return LocalTime.of(hour, minute, second, nanos);
    }

    ZoneOffset offset() {
      int sign;
      if (accept('+')) {
        sign = 1;
      } else if (accept('-')) {
        sign = -1;
      } else {
        throw bad("expected a UTC offset");
      }
      int hours = (int) number(2, 2);
      int minutes = accept(':') ? (int) number(2, 2) : 0;
      int seconds = accept(':') ? (int) number(2, 2) : 0;
      return ZoneOffset.ofHoursMinutesSeconds(sign * hours, sign * minutes, sign * seconds);
    }

    /** Reads {@code Y-MM-DD HH:MM:SS[.f]}, an offset if {@code withZone}, then BC if present. */
    LocalDateTime dateTime(boolean withZone) {
      LocalDate date = date();
      expect(' ');
      LocalTime time = time(false);
      if (withZone) {
        zone = offset();
      }
      era();
      return LocalDateTime.of(date, time);
    }
  }
}
