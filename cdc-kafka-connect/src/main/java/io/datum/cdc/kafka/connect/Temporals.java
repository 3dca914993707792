package io.datum.cdc.kafka.connect;

import io.datum.cdc.event.PgInterval;
import io.datum.cdc.kafka.connect.ValueMapper.Unrepresentable;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.Locale;

/**
 * The temporal conversions, with the facts they follow from Debezium 3.6.1 ({@code
 * io.debezium.time.*}, {@code PostgresValueConverter}) and how the library represents PostgreSQL's
 * special values ({@code infinity} as the Java type's MAX/MIN, {@code 24:00:00} as {@link
 * LocalTime#MAX}).
 */
final class Temporals {

  /** Debezium's epoch day for {@code date 'infinity'} ({@code LocalDate -5877611-06-21}). */
  static final int DATE_POSITIVE_INFINITY = -2147472692;

  /** Debezium's epoch day for {@code date '-infinity'} ({@code LocalDate -5877611-06-22}). */
  static final int DATE_NEGATIVE_INFINITY = -2147472691;

  /**
   * Debezium's epoch microseconds for {@code timestamp 'infinity'} (pgjdbc's {@code
   * PGStatement.DATE_POSITIVE_INFINITY} taken as microseconds).
   */
  static final long TIMESTAMP_POSITIVE_INFINITY_MICROS = 9223372036825200000L;

  /** Debezium's epoch microseconds for {@code timestamp '-infinity'}. */
  static final long TIMESTAMP_NEGATIVE_INFINITY_MICROS = -9223372036832400000L;

  /** Microseconds in a day: {@code time '24:00:00'}. */
  static final long MICROS_PER_DAY = 86_400_000_000L;

  /** Debezium's {@code MicroDuration.DAYS_PER_MONTH_AVG}: 365.25 / 12. */
  static final double DAYS_PER_MONTH_AVG = 365.25 / 12.0d;

  private static final DateTimeFormatter[] ZONED_TIMESTAMP = new DateTimeFormatter[7];

  static {
    ZONED_TIMESTAMP[0] = DateTimeFormatter.ISO_OFFSET_DATE_TIME;
    for (int width = 1; width <= 6; width++) {
      ZONED_TIMESTAMP[width] =
          new DateTimeFormatterBuilder()
              .append(DateTimeFormatter.ISO_LOCAL_DATE)
              .appendLiteral('T')
              .appendValue(ChronoField.HOUR_OF_DAY, 2)
              .appendLiteral(':')
              .appendValue(ChronoField.MINUTE_OF_HOUR, 2)
              .appendLiteral(':')
              .appendValue(ChronoField.SECOND_OF_MINUTE, 2)
              .appendFraction(ChronoField.NANO_OF_SECOND, width, width, true)
              .appendOffsetId()
              .toFormatter(Locale.ENGLISH);
    }
  }

  /** Not instantiated. */
  private Temporals() {}

  /**
   * Returns the fractional-second digits of a {@code time}/{@code timestamp} column: its typmod, 6
   * when it has none (pgjdbc's {@code TypeInfoCache.getScale}, which Debezium uses).
   *
   * @param typmod the column's type modifier
   * @return 0 to 6
   */
  static int precision(int typmod) {
    return typmod < 0 || typmod > 6 ? 6 : typmod;
  }

  /**
   * A {@code date} as Debezium's {@code io.debezium.time.Date}: days since 1970-01-01.
   *
   * @param value a LocalDate ({@link LocalDate#MAX}/{@code MIN} for ±infinity)
   * @return the epoch day, Integer
   */
  static Object epochDay(Object value) {
    LocalDate date = (LocalDate) value;
    if (date.equals(LocalDate.MAX)) {
      return DATE_POSITIVE_INFINITY;
    }
    if (date.equals(LocalDate.MIN)) {
      return DATE_NEGATIVE_INFINITY;
    }
    return (int) date.toEpochDay();
  }

  /**
   * A {@code time} as microseconds past midnight ({@code io.debezium.time.MicroTime}); {@code
   * 24:00:00} is {@value #MICROS_PER_DAY}, as Debezium gives it.
   *
   * @param value a LocalTime ({@link LocalTime#MAX} for 24:00:00)
   * @return the microseconds, Long
   */
  static Object microOfDay(Object value) {
    LocalTime time = (LocalTime) value;
    return time.equals(LocalTime.MAX) ? MICROS_PER_DAY : time.toNanoOfDay() / 1_000L;
  }

  /**
   * A {@code time} as milliseconds past midnight ({@code io.debezium.time.Time}).
   *
   * @param value a LocalTime
   * @return the milliseconds, Integer
   */
  static Object milliOfDay(Object value) {
    return (int) ((Long) microOfDay(value) / 1_000L);
  }

  /**
   * A {@code timestamp} as microseconds since the epoch ({@code io.debezium.time.MicroTimestamp});
   * ±infinity as Debezium's constants.
   *
   * @param value a LocalDateTime (MAX/MIN for ±infinity)
   * @return the microseconds, Long, or an {@link Unrepresentable} beyond INT64 (after 294247 AD)
   */
  static Object epochMicros(Object value) {
    LocalDateTime ts = (LocalDateTime) value;
    if (ts.equals(LocalDateTime.MAX)) {
      return TIMESTAMP_POSITIVE_INFINITY_MICROS;
    }
    if (ts.equals(LocalDateTime.MIN)) {
      return TIMESTAMP_NEGATIVE_INFINITY_MICROS;
    }
    try {
      return Math.addExact(
          Math.multiplyExact(ts.toEpochSecond(ZoneOffset.UTC), 1_000_000L), ts.getNano() / 1_000L);
    } catch (ArithmeticException e) {
      return new Unrepresentable(null, ts.toString());
    }
  }

  /**
   * A {@code timestamp} as milliseconds since the epoch ({@code io.debezium.time.Timestamp});
   * sub-millisecond digits dropped (floor), ±infinity as Debezium's constants divided by 1000.
   *
   * @param value a LocalDateTime
   * @return the milliseconds, Long, or an {@link Unrepresentable}
   */
  static Object epochMillis(Object value) {
    Object micros = epochMicros(value);
    return micros instanceof Long m ? Math.floorDiv(m, 1_000L) : micros;
  }

  /**
   * A {@code timestamptz} as Debezium's {@code io.debezium.time.ZonedTimestamp}: ISO-8601 in UTC
   * ({@code Z}), with {@code width} fractional digits (the column's precision; any number when 0),
   * {@code infinity}/{@code -infinity} as those words.
   *
   * @param value an Instant (MAX/MIN for ±infinity)
   * @param width 0 to 6
   * @return the text
   */
  static Object zonedTimestamp(Object value, int width) {
    Instant instant = (Instant) value;
    if (instant.equals(Instant.MAX)) {
      return "infinity";
    }
    if (instant.equals(Instant.MIN)) {
      return "-infinity";
    }
    return ZONED_TIMESTAMP[width].format(instant.atOffset(ZoneOffset.UTC));
  }

  /**
   * A {@code timetz} as Debezium's {@code io.debezium.time.ZonedTime}: the same instant of the day
   * in UTC, ISO-8601 ({@code 10:15:30.5Z}). {@code 24:00:00+00} stays {@code 24:00:00Z}; {@code
   * 24:00:00} at another offset is the UTC time it denotes.
   *
   * @param value an OffsetTime (its local time {@link LocalTime#MAX} for 24:00:00)
   * @return the text
   */
  static Object zonedTime(Object value) {
    OffsetTime time = (OffsetTime) value;
    if (time.toLocalTime().equals(LocalTime.MAX)) {
      int offset = time.getOffset().getTotalSeconds();
      if (offset == 0) {
        return "24:00:00Z";
      }
      time = OffsetTime.of(LocalTime.MIDNIGHT, time.getOffset());
    }
    return time.withOffsetSameInstant(ZoneOffset.UTC).format(DateTimeFormatter.ISO_OFFSET_TIME);
  }

  /**
   * An {@code interval} as Debezium's {@code io.debezium.time.MicroDuration}: microseconds, a month
   * {@value #DAYS_PER_MONTH_AVG} days, computed with Debezium's formula ({@code
   * MicroDuration.durationMicros}) from the fields pgjdbc's {@code PGInterval} gives; PostgreSQL
   * 17's ±infinity as {@link Long#MAX_VALUE}/{@link Long#MIN_VALUE}.
   *
   * @param value a PgInterval
   * @return the microseconds, Long
   */
  static Object durationMicros(Object value) {
    PgInterval interval = (PgInterval) value;
    if (interval.equals(PgInterval.INFINITY)) {
      return Long.MAX_VALUE;
    }
    if (interval.equals(PgInterval.NEGATIVE_INFINITY)) {
      return Long.MIN_VALUE;
    }
    long micros = interval.microseconds();
    long hours = micros / 3_600_000_000L;
    long minutes = (micros % 3_600_000_000L) / 60_000_000L;
    double seconds = (micros % 60_000_000L) / 1e6;
    double days = interval.months() * DAYS_PER_MONTH_AVG + interval.days();
    double totalSeconds = (((days * 24 + hours) * 60) + minutes) * 60 + seconds;
    return (long) (totalSeconds * 1e6);
  }

  /**
   * An {@code interval} as Debezium's {@code io.debezium.time.Interval}: {@code
   * P<y>Y<m>M<d>DT<h>H<m>M<s>S} with every part present ({@code Interval.toIsoString}), or {@code
   * infinity}/{@code -infinity}.
   *
   * @param value a PgInterval
   * @return the text
   */
  static Object intervalString(Object value) {
    PgInterval interval = (PgInterval) value;
    if (interval.equals(PgInterval.INFINITY)) {
      return "infinity";
    }
    if (interval.equals(PgInterval.NEGATIVE_INFINITY)) {
      return "-infinity";
    }
    long micros = interval.microseconds();
    BigDecimal seconds = BigDecimal.valueOf(micros % 60_000_000L, 6).stripTrailingZeros();
    return "P"
        + interval.months() / 12
        + "Y"
        + interval.months() % 12
        + "M"
        + interval.days()
        + "DT"
        + micros / 3_600_000_000L
        + "H"
        + (micros % 3_600_000_000L) / 60_000_000L
        + "M"
        + seconds.toPlainString()
        + "S";
  }

  /**
   * Epoch days as a {@link java.util.Date} at midnight UTC (Connect's {@code Date}).
   *
   * @param epochDay the day
   * @return the date
   */
  static java.util.Date connectDate(int epochDay) {
    return new java.util.Date(epochDay * 86_400_000L);
  }
}
