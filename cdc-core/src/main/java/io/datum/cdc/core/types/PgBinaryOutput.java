package io.datum.cdc.core.types;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.HexFormat;

/**
 * The text a builtin type's output function prints, computed from the value's binary send format:
 * what a composite field, a range bound or an array element of that type looks like inside the text
 * of a composite ({@code record_out}), range ({@code range_out}) or array ({@code array_out}). The
 * session settings are those the source's replication connection uses: {@code DateStyle=ISO},
 * {@code IntervalStyle=iso_8601}, {@code extra_float_digits=3}, {@code bytea_output=hex}, UTF-8;
 * {@code timestamptz} prints in the session's {@code TimeZone}, given as a {@link ZoneId}.
 *
 * <p>Formats mirrored (files under src/backend/utils/adt/ and src/common/): {@code boolout} ({@code
 * t}/{@code f}, bool.c); {@code int2out}/{@code int4out}/{@code int8out}/{@code oidout} (decimal);
 * {@code float4out}/{@code float8out} (shortest round-trip digits, f2s.c/d2s.c, see {@link
 * PgFloatOutput}); {@code numeric_out} (exactly dscale fraction digits, {@code NaN}, {@code
 * Infinity}, numeric.c); {@code byteaout} ({@code \x} and lower-case hex, varlena.c/bytea.c);
 * {@code uuid_out} (lower-case 8-4-4-4-12, uuid.c); {@code date_out}, {@code time_out}, {@code
 * timetz_out}, {@code timestamp_out}, {@code timestamptz_out} (ISO style: {@code EncodeDateOnly},
 * {@code EncodeTimeOnly}, {@code EncodeDateTime}, {@code EncodeTimezone}, {@code AppendSeconds},
 * datetime.c: zero-padded four-digit years, {@code BC} suffix for years up to 0, fraction digits
 * only as many as needed, zone as {@code +HH}, {@code +HH:MM} or {@code +HH:MM:SS}); {@code
 * interval_out} ({@code EncodeInterval} with {@code INTSTYLE_ISO_8601}, datetime.c); the text
 * types, {@code json} and {@code jsonb} (their text); and every type {@link PgBinaryText} renders.
 * Arrays of these print as {@code array_out} does, see {@link PgBinaryArrays#renderText}.
 *
 * <p>{@code timestamptz} caveat: PostgreSQL converts with its own time zone database, this class
 * with the JVM's ({@link java.time.zone.ZoneRules}); the two agree while both databases carry the
 * same rules for the zone.
 */
final class PgBinaryOutput {

  private static final long PG_EPOCH_DAYS = 10_957L;
  private static final long USECS_PER_DAY = 86_400_000_000L;
  private static final long USECS_PER_HOUR = 3_600_000_000L;
  private static final long USECS_PER_MINUTE = 60_000_000L;
  private static final long USECS_PER_SEC = 1_000_000L;

  private PgBinaryOutput() {}

  /**
   * Returns whether {@link #text} can render a type oid: a {@link PgBuiltinType} or the array type
   * of one.
   *
   * @param typeOid a type oid
   * @return true for the builtin types and their arrays
   */
  static boolean renders(int typeOid) {
    return PgBuiltinType.of(typeOid) != null || PgBuiltinType.elementOf(typeOid) != null;
  }

  /**
   * Renders one whole binary value as the type's output function prints it.
   *
   * @param typeOid a type oid for which {@link #renders} is true
   * @param c the value; consumed entirely
   * @param zone the session time zone for {@code timestamptz}, or null if unknown
   * @return the text
   * @throws IllegalArgumentException if the value is malformed, the type is not rendered here, or a
   *     {@code timestamptz} is to be printed without a zone
   */
  static String text(int typeOid, PgBinaryCursor c, ZoneId zone) {
    PgBuiltinType element = PgBuiltinType.elementOf(typeOid);
    if (element != null) {
      return PgBinaryArrays.renderText(
          c, element.oid(), element.delimiter(), e -> text(element.oid(), e, zone));
    }
    PgBuiltinType type = PgBuiltinType.of(typeOid);
    if (type == null) {
      throw new IllegalArgumentException(
          "type oid " + Integer.toUnsignedString(typeOid) + " has no binary-to-text conversion");
    }
    String text = type.outputText(c, zone);
    if (c.remaining() != 0) { // the text only for a failure, not per value
      c.expectEnd("binary value of type oid " + Integer.toUnsignedString(typeOid));
    }
    return text;
  }

  /** {@code boolout} of {@code boolsend}'s byte. */
  static String boolText(PgBinaryCursor c, ZoneId zone) {
    return PgBinaryScalars.bool(c) ? "t" : "f";
  }

  /** {@code numeric_out} of {@code numeric_send}. */
  static String numericText(PgBinaryCursor c, ZoneId zone) {
    return numeric(PgBinaryScalars.numeric(c));
  }

  /** {@code float4out}: shortest round-trip digits. */
  static String float4Text(PgBinaryCursor c, ZoneId zone) {
    return PgFloatOutput.format(PgBinaryScalars.float4(c).floatValue());
  }

  /** {@code float8out}: shortest round-trip digits. */
  static String float8Text(PgBinaryCursor c, ZoneId zone) {
    return PgFloatOutput.format(PgBinaryScalars.float8(c).doubleValue());
  }

  /** {@code byteaout} with {@code bytea_output=hex}: {@code \x} and lower-case hex. */
  static String byteaText(PgBinaryCursor c, ZoneId zone) {
    int at = c.skip(c.remaining(), "bytea");
    return "\\x" + HexFormat.of().formatHex(c.array(), at, c.index());
  }

  /** {@code date_out} of {@code date_send}. */
  static String dateText(PgBinaryCursor c, ZoneId zone) {
    PgBinaryScalars.fixed(c, 4, "date");
    return date(c.i32("date"));
  }

  /** {@code time_out} of {@code time_send}. */
  static String timeText(PgBinaryCursor c, ZoneId zone) {
    PgBinaryScalars.fixed(c, 8, "time");
    return time(c.i64("time"));
  }

  /** {@code timetz_out} of {@code timetz_send}. */
  static String timeTzText(PgBinaryCursor c, ZoneId zone) {
    PgBinaryScalars.fixed(c, 12, "timetz");
    long micros = c.i64("timetz time");
    int zoneWest = c.i32("timetz zone");
    return time(micros) + zone(zoneWest);
  }

  /** {@code timestamp_out} of {@code timestamp_send}. */
  static String timestampText(PgBinaryCursor c, ZoneId zone) {
    PgBinaryScalars.fixed(c, 8, "timestamp");
    return timestamp(c.i64("timestamp"), null);
  }

  /** {@code timestamptz_out} of {@code timestamptz_send}, in the session's TimeZone. */
  static String timestampTzText(PgBinaryCursor c, ZoneId zone) {
    PgBinaryScalars.fixed(c, 8, "timestamptz");
    long micros = c.i64("timestamptz");
    if (zone == null && micros != Long.MIN_VALUE && micros != Long.MAX_VALUE) {
      throw new IllegalArgumentException(
          "timestamptz text depends on the replication session's TimeZone, which is"
              + " unknown or not a zone the JVM knows");
    }
    return timestamp(micros, zone);
  }

  /** {@code interval_out} of {@code interval_send}. */
  static String intervalText(PgBinaryCursor c, ZoneId zone) {
    PgBinaryScalars.fixed(c, 16, "interval");
    long micros = c.i64("interval time");
    int days = c.i32("interval days");
    int months = c.i32("interval months");
    return interval(months, days, micros);
  }

  /**
   * {@code numeric_out}: the digits with dscale fraction digits; NaN and the infinities spelled.
   */
  static String numeric(Object value) {
    if (value instanceof BigDecimal d) {
      return d.toPlainString();
    }
    double v = (Double) value;
    return Double.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
  }

  /** {@code date_out}, ISO: {@code YYYY-MM-DD}, {@code YYYY-MM-DD BC}, {@code infinity}. */
  static String date(int days) {
    if (days == Integer.MIN_VALUE) {
      return "-infinity";
    } else if (days == Integer.MAX_VALUE) {
      return "infinity";
    }
    LocalDate d = LocalDate.ofEpochDay(PG_EPOCH_DAYS + days);
    StringBuilder sb = new StringBuilder(16);
    appendDate(sb, d.getYear(), d.getMonthValue(), d.getDayOfMonth());
    if (d.getYear() <= 0) {
      sb.append(" BC");
    }
    return sb.toString();
  }

  /** Year as {@code %04d} (1 BC is year 0, printed 0001), then {@code -MM-DD}. */
  private static void appendDate(StringBuilder sb, int year, int month, int day) {
    int shown = year > 0 ? year : 1 - year;
    pad(sb, shown, 4);
    sb.append('-');
    pad(sb, month, 2);
    sb.append('-');
    pad(sb, day, 2);
  }

  private static void pad(StringBuilder sb, long v, int width) {
    String s = Long.toString(v);
    for (int i = s.length(); i < width; i++) {
      sb.append('0');
    }
    sb.append(s);
  }

  /** {@code time_out}: {@code HH:MM:SS} and the needed fraction digits; 24:00:00 allowed. */
  static String time(long micros) {
    if (micros < 0 || micros > USECS_PER_DAY) {
      throw new IllegalArgumentException("time of " + micros + " microseconds is out of range");
    }
    StringBuilder sb = new StringBuilder(16);
    appendTime(sb, micros);
    return sb.toString();
  }

  private static void appendTime(StringBuilder sb, long micros) {
    pad(sb, micros / USECS_PER_HOUR, 2);
    sb.append(':');
    pad(sb, micros % USECS_PER_HOUR / USECS_PER_MINUTE, 2);
    sb.append(':');
    pad(sb, micros % USECS_PER_MINUTE / USECS_PER_SEC, 2);
    appendFraction(sb, (int) (micros % USECS_PER_SEC));
  }

  /** {@code AppendSeconds}: a fraction only if non-zero, without trailing zeros. */
  private static void appendFraction(StringBuilder sb, int usec) {
    if (usec == 0) {
      return;
    }
    String digits = Integer.toString(Math.abs(usec));
    sb.append('.');
    for (int i = digits.length(); i < 6; i++) {
      sb.append('0');
    }
    int end = digits.length();
    while (digits.charAt(end - 1) == '0') {
      end--;
    }
    sb.append(digits, 0, end);
  }

  /**
   * {@code EncodeTimezone}: the zone in seconds WEST of UTC printed as the offset east: {@code
   * +HH}, {@code +HH:MM} when minutes are non-zero, {@code +HH:MM:SS} when seconds are.
   */
  static String zone(int secondsWest) {
    int abs = Math.abs(secondsWest);
    int hour = abs / 3600;
    int min = abs / 60 % 60;
    int sec = abs % 60;
    StringBuilder sb = new StringBuilder(9).append(secondsWest <= 0 ? '+' : '-');
    pad(sb, hour, 2);
    if (sec != 0 || min != 0) {
      sb.append(':');
      pad(sb, min, 2);
    }
    if (sec != 0) {
      sb.append(':');
      pad(sb, sec, 2);
    }
    return sb.toString();
  }

  /**
   * {@code timestamp_out} ({@code zone} null) or {@code timestamptz_out} in {@code zone}: {@code
   * YYYY-MM-DD HH:MM:SS[.ffffff][+zone][ BC]}, {@code infinity}, {@code -infinity}.
   */
  static String timestamp(long micros, ZoneId zone) {
    if (micros == Long.MIN_VALUE) {
      return "-infinity";
    } else if (micros == Long.MAX_VALUE) {
      return "infinity";
    }
    long local = micros;
    int offset = 0;
    if (zone != null) {
      Instant instant =
          Instant.ofEpochSecond(
              PG_EPOCH_DAYS * 86_400L + Math.floorDiv(micros, USECS_PER_SEC),
              Math.floorMod(micros, USECS_PER_SEC) * 1000);
      offset = zone.getRules().getOffset(instant).getTotalSeconds();
      local = micros + offset * USECS_PER_SEC;
    }
    long days = Math.floorDiv(local, USECS_PER_DAY);
    long timeOfDay = Math.floorMod(local, USECS_PER_DAY);
    LocalDateTime t =
        LocalDateTime.ofEpochSecond((PG_EPOCH_DAYS + days) * 86_400L, 0, ZoneOffset.UTC);
    StringBuilder sb = new StringBuilder(40);
    appendDate(sb, t.getYear(), t.getMonthValue(), t.getDayOfMonth());
    sb.append(' ');
    appendTime(sb, timeOfDay);
    if (zone != null) {
      sb.append(zone(-offset));
    }
    if (t.getYear() <= 0) {
      sb.append(" BC");
    }
    return sb.toString();
  }

  /**
   * {@code interval_out} with {@code IntervalStyle=iso_8601} ({@code EncodeInterval}, datetime.c,
   * PostgreSQL 15+ field widths): years and months from the month count, days, then hours, minutes
   * and seconds from the microseconds, each truncated toward zero so that every part carries its
   * own sign; zero parts are left out, {@code PT0S} for a zero interval; {@code infinity} and
   * {@code -infinity} for PostgreSQL 17's infinite intervals.
   */
  static String interval(int months, int days, long micros) {
    if (micros == Long.MAX_VALUE && days == Integer.MAX_VALUE && months == Integer.MAX_VALUE) {
      return "infinity";
    } else if (micros == Long.MIN_VALUE
        && days == Integer.MIN_VALUE
        && months == Integer.MIN_VALUE) {
      return "-infinity";
    }
    int year = months / 12;
    int mon = months % 12;
    long hour = micros / USECS_PER_HOUR;
    long rest = micros - hour * USECS_PER_HOUR;
    long min = rest / USECS_PER_MINUTE;
    rest -= min * USECS_PER_MINUTE;
    long sec = rest / USECS_PER_SEC;
    int fsec = (int) (rest - sec * USECS_PER_SEC);
    if (year == 0 && mon == 0 && days == 0 && hour == 0 && min == 0 && sec == 0 && fsec == 0) {
      return "PT0S";
    }
    StringBuilder sb = new StringBuilder(32).append('P');
    part(sb, year, 'Y');
    part(sb, mon, 'M');
    part(sb, days, 'D');
    if (hour != 0 || min != 0 || sec != 0 || fsec != 0) {
      sb.append('T');
    }
    part(sb, hour, 'H');
    part(sb, min, 'M');
    if (sec != 0 || fsec != 0) {
      if (sec < 0 || fsec < 0) {
        sb.append('-');
      }
      sb.append(Math.abs(sec));
      appendFraction(sb, fsec);
      sb.append('S');
    }
    return sb.toString();
  }

  private static void part(StringBuilder sb, long value, char unit) {
    if (value != 0) {
      sb.append(value).append(unit);
    }
  }
}
