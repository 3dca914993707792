package io.datum.cdc.core.types;

import io.datum.cdc.event.PgInterval;
import io.datum.cdc.event.PgJson;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.UUID;

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
    if (ndigits
        <= 4) { // at most 16 decimal digits: fits a long, and a BigDecimal without BigInteger
      long v = 0;
      for (int i = 0; i < ndigits; i++) {
        v = v * 10_000 + digit(c, i);
      }
      // rounding toward zero is symmetric: negating first gives the same value
      return BigDecimal.valueOf(sign == NUMERIC_NEG ? -v : v, 4 * (ndigits - weight - 1))
          .setScale(dscale, RoundingMode.DOWN);
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

  /** Checks that a fixed-size value has exactly its size. */
  static void fixed(PgBinaryCursor c, int size, String type) {
    if (c.remaining() != size) {
      throw new IllegalArgumentException(
          type + " binary value must be " + size + " bytes, got " + c.remaining());
    }
  }

  /** {@code boolsend}: one byte, 1 or 0. */
  static Boolean bool(PgBinaryCursor c) {
    fixed(c, 1, "bool");
    int b = c.u8("bool");
    if (b > 1) {
      throw new IllegalArgumentException("bool byte is " + b + "; 0 or 1 expected");
    }
    return b == 1;
  }

  /** {@code int2send}. */
  static Short int2(PgBinaryCursor c) {
    fixed(c, 2, "int2");
    return c.i16("int2");
  }

  /** {@code int4send}. */
  static Integer int4(PgBinaryCursor c) {
    fixed(c, 4, "int4");
    return c.i32("int4");
  }

  /** {@code int8send}. */
  static Long int8(PgBinaryCursor c) {
    fixed(c, 8, "int8");
    return c.i64("int8");
  }

  /** {@code oidsend}: unsigned 32 bits, as a Long. */
  static Long oid(PgBinaryCursor c) {
    fixed(c, 4, "oid");
    return Integer.toUnsignedLong(c.i32("oid"));
  }

  /** {@code float4send}. */
  static Float float4(PgBinaryCursor c) {
    fixed(c, 4, "float4");
    return Float.intBitsToFloat(c.i32("float4"));
  }

  /** {@code float8send}. */
  static Double float8(PgBinaryCursor c) {
    fixed(c, 8, "float8");
    return c.f64("float8");
  }

  /** {@code textsend}, {@code varcharsend}, {@code bpcharsend}, {@code namesend}: the text. */
  static String text(PgBinaryCursor c) {
    return c.restUtf8("text");
  }

  /**
   * {@code charsend} sends the byte; {@code charout} (src/backend/utils/adt/char.c, PostgreSQL 15+)
   * prints NUL as the empty string, ASCII as itself and a byte with the high bit set as {@code
   * \ooo} (PostgreSQL 14 printed that byte raw, which is not valid UTF-8).
   */
  static String charValue(PgBinaryCursor c) {
    fixed(c, 1, "\"char\"");
    int b = c.u8("\"char\"");
    if (b == 0) {
      return "";
    } else if (b < 0x80) {
      return String.valueOf((char) b);
    }
    return "\\" + (b >> 6) + ((b >> 3) & 7) + (b & 7);
  }

  /** {@code byteasend}: the bytes themselves (a copy). */
  static byte[] bytea(PgBinaryCursor c) {
    int at = c.skip(c.remaining(), "bytea");
    return Arrays.copyOfRange(c.array(), at, c.index());
  }

  /** {@code json_send}: the text as stored. */
  static PgJson json(PgBinaryCursor c) {
    return new PgJson(c.restUtf8("json"));
  }

  /** {@code jsonb_send}: format version 1, then {@code jsonb_out}'s text. */
  static PgJson jsonb(PgBinaryCursor c) {
    return new PgJson(PgBinaryText.versioned(c, "jsonb"));
  }

  /** {@code uuid_send}: 16 bytes, big-endian. */
  static UUID uuid(PgBinaryCursor c) {
    fixed(c, 16, "uuid");
    return new UUID(c.i64("uuid"), c.i64("uuid"));
  }

  /** {@code date_send}: int32 days since 2000-01-01; INT32_MIN/MAX are -infinity/infinity. */
  static LocalDate date(PgBinaryCursor c) {
    fixed(c, 4, "date");
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
    fixed(c, 8, "time");
    return timeOfDay(c);
  }

  private static LocalTime timeOfDay(PgBinaryCursor c) {
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
    fixed(c, 12, "timetz");
    LocalTime time = timeOfDay(c);
    int zone = c.i32("timetz zone");
    if (zone < -TZDISP_LIMIT || zone > TZDISP_LIMIT) {
      throw new IllegalArgumentException("timetz zone of " + zone + " seconds is out of range");
    }
    return OffsetTime.of(time, ZoneOffset.ofTotalSeconds(-zone));
  }

  /** {@code timestamp_send}: int64 microseconds since 2000-01-01; INT64_MIN/MAX are infinities. */
  static LocalDateTime timestamp(PgBinaryCursor c) {
    fixed(c, 8, "timestamp");
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
    fixed(c, 8, "timestamptz");
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
    fixed(c, 16, "interval");
    long micros = c.i64("interval time");
    int days = c.i32("interval days");
    int months = c.i32("interval months");
    return new PgInterval(
        months, days, micros); // infinite ones equal PgInterval.INFINITY/NEGATIVE_INFINITY
  }
}
