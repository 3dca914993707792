package io.datum.cdc.core.types;

import io.datum.cdc.event.PgInterval;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;

/**
 * Binary send formats of {@code numeric} and of the date/time types, decoded to the values {@link
 * PgScalarValues} and {@link PgTemporalValues} give for the same values' text. Dates and times
 * count from PostgreSQL's epoch 2000-01-01 (days for {@code date}, microseconds otherwise;
 * src/include/datatype/timestamp.h), on the proleptic Gregorian calendar that {@link LocalDate}
 * also uses (so 44 BC is year -43 in both). Throws {@link IllegalArgumentException} for a value of
 * the wrong size or out of the type's range.
 */
final class PgBinaryScalars {

  /** Days from 1970-01-01 to 2000-01-01. */
  private static final long PG_EPOCH_DAYS = 10_957L;

  /** Seconds from 1970-01-01 to 2000-01-01. */
  private static final long PG_EPOCH_SECONDS = 946_684_800L;

  private static final long USECS_PER_DAY = 86_400_000_000L;

  /** Largest {@code timetz} zone displacement, 15:59:59 ({@code TZDISP_LIMIT}, timestamp.h). */
  private static final int TZDISP_LIMIT = (15 * 60 + 59) * 60 + 59;

  private static final int NUMERIC_POS = 0x0000;
  private static final int NUMERIC_NEG = 0x4000;
  private static final int NUMERIC_NAN = 0xC000;
  private static final int NUMERIC_PINF = 0xD000;
  private static final int NUMERIC_NINF = 0xF000;

  private PgBinaryScalars() {}

  /**
   * {@code numeric_send} (src/backend/utils/adt/numeric.c): uint16 ndigits, int16 weight (of the
   * first digit, in powers of 10000), uint16 sign (0x0000 +, 0x4000 -, 0xC000 NaN, 0xD000 Infinity,
   * 0xF000 -Infinity), uint16 dscale (digits after the decimal point), then ndigits base-10000
   * digits. The result is a BigDecimal whose scale is dscale, as the text {@code 12.340} has scale
   * 3; {@code numeric_out} prints exactly dscale fraction digits, truncating any beyond ({@code
   * get_str_from_var}), and so does this. NaN and ±Infinity become the Double values, as {@link
   * PgScalarValues#parseNumeric} gives.
   */
  static Object numeric(PgBinaryCursor c) {
    int ndigits = c.i16("numeric digit count") & 0xFFFF;
    int weight = c.i16("numeric weight");
    int sign = c.i16("numeric sign") & 0xFFFF;
    int dscale = c.i16("numeric display scale") & 0xFFFF;
    if (c.remaining() != 2 * ndigits) {
      throw new IllegalArgumentException(
          "numeric with "
              + ndigits
              + " digits needs "
              + 2 * ndigits
              + " digit bytes, got "
              + c.remaining());
    }
    switch (sign) {
      case NUMERIC_NAN, NUMERIC_PINF, NUMERIC_NINF -> {
        if (ndigits != 0) {
          throw new IllegalArgumentException("special numeric value with " + ndigits + " digits");
        }
        return sign == NUMERIC_NAN
            ? Double.NaN
            : sign == NUMERIC_PINF ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
      }
      case NUMERIC_POS, NUMERIC_NEG -> {}
      default ->
          throw new IllegalArgumentException("invalid numeric sign 0x" + Integer.toHexString(sign));
    }
    if (dscale > 0x3FFF) { // NUMERIC_DSCALE_MASK; numeric_recv rejects larger scales
      throw new IllegalArgumentException("invalid numeric display scale " + dscale);
    }
    BigInteger unscaled;
    if (ndigits <= 4) { // at most 16 decimal digits: fits a long
      long v = 0;
      for (int i = 0; i < ndigits; i++) {
        v = v * 10_000 + digit(c, i);
      }
      unscaled = BigInteger.valueOf(v);
    } else {
      char[] chars = new char[4 * ndigits];
      for (int i = 0; i < ndigits; i++) {
        int d = digit(c, i);
        for (int k = 3; k >= 0; k--, d /= 10) {
          chars[4 * i + k] = (char) ('0' + d % 10);
        }
      }
      unscaled = new BigInteger(new String(chars));
    }
    // value = unscaled * 10000^(weight + 1 - ndigits)
    BigDecimal value = new BigDecimal(unscaled, 4 * (ndigits - weight - 1));
    value = value.setScale(dscale, RoundingMode.DOWN);
    return sign == NUMERIC_NEG ? value.negate() : value;
  }

  private static int digit(PgBinaryCursor c, int i) {
    int d = c.i16("numeric digit");
    if (d < 0 || d >= 10_000) {
      throw new IllegalArgumentException("invalid numeric digit " + d + " at digit " + (i + 1));
    }
    return d;
  }

  /** {@code date_send}: int32 days since 2000-01-01; INT32_MIN/MAX are -infinity/infinity. */
  static LocalDate date(PgBinaryCursor c) {
    int days = c.i32("date");
    if (days == Integer.MIN_VALUE) {
      return LocalDate.MIN;
    } else if (days == Integer.MAX_VALUE) {
      return LocalDate.MAX;
    }
    return LocalDate.ofEpochDay(PG_EPOCH_DAYS + days);
  }

  /** {@code time_send}: int64 microseconds since midnight; 24:00:00 becomes LocalTime.MAX. */
  static LocalTime time(PgBinaryCursor c) {
    long micros = c.i64("time");
    if (micros < 0 || micros > USECS_PER_DAY) {
      throw new IllegalArgumentException("time of " + micros + " microseconds is out of range");
    }
    return micros == USECS_PER_DAY ? LocalTime.MAX : LocalTime.ofNanoOfDay(micros * 1000);
  }

  /**
   * {@code timetz_send}: int64 microseconds since midnight, int32 zone in seconds WEST of UTC (the
   * offset's negation, as {@code EncodeTimezone} in datetime.c prints it).
   */
  static OffsetTime timeTz(PgBinaryCursor c) {
    LocalTime time = time(c);
    int zone = c.i32("timetz zone");
    if (zone < -TZDISP_LIMIT || zone > TZDISP_LIMIT) {
      throw new IllegalArgumentException("timetz zone of " + zone + " seconds is out of range");
    }
    return OffsetTime.of(time, ZoneOffset.ofTotalSeconds(-zone));
  }

  /** {@code timestamp_send}: int64 microseconds since 2000-01-01; INT64_MIN/MAX are infinities. */
  static LocalDateTime timestamp(PgBinaryCursor c) {
    long micros = c.i64("timestamp");
    if (micros == Long.MIN_VALUE) {
      return LocalDateTime.MIN;
    } else if (micros == Long.MAX_VALUE) {
      return LocalDateTime.MAX;
    }
    return LocalDateTime.ofEpochSecond(
        PG_EPOCH_SECONDS + Math.floorDiv(micros, 1_000_000L),
        (int) Math.floorMod(micros, 1_000_000L) * 1000,
        ZoneOffset.UTC);
  }

  /** {@code timestamptz_send}: as timestamp, counted in UTC. */
  static Instant timestampTz(PgBinaryCursor c) {
    long micros = c.i64("timestamptz");
    if (micros == Long.MIN_VALUE) {
      return Instant.MIN;
    } else if (micros == Long.MAX_VALUE) {
      return Instant.MAX;
    }
    return Instant.ofEpochSecond(
        PG_EPOCH_SECONDS + Math.floorDiv(micros, 1_000_000L),
        Math.floorMod(micros, 1_000_000L) * 1000);
  }

  /**
   * {@code interval_send}: int64 microseconds, int32 days, int32 months. PostgreSQL 17's infinite
   * intervals (all three fields at their maximum, or all at their minimum; {@code
   * INTERVAL_NOEND}/{@code INTERVAL_NOBEGIN}) come out as {@link PgInterval#INFINITY} and {@link
   * PgInterval#NEGATIVE_INFINITY}, as their text does from {@link PgTemporalValues#parseInterval}.
   */
  static PgInterval interval(PgBinaryCursor c) {
    long micros = c.i64("interval time");
    int days = c.i32("interval days");
    int months = c.i32("interval months");
    return new PgInterval(
        months, days, micros); // infinite ones equal PgInterval.INFINITY/NEGATIVE_INFINITY
  }
}
